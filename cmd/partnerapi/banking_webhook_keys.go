package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"

	"partnerapi/internal/banking"
)

// webhookPolicy is the rule for webhook URLs in contour: http only outside
// production, private and local addresses only when the operator allows
// them, host names resolved by the system resolver when a URL is set (and
// again, by the delivery client, when it is dialled).
func (f *paymentFlags) webhookPolicy(contour string) banking.WebhookURLPolicy {
	return banking.WebhookURLPolicy{
		AllowHTTP:    contour != banking.ContourProduction,
		AllowPrivate: f.webhookAllowPrivate,
		Resolver:     net.DefaultResolver,
	}
}

// parseWebhookKeys decodes the webhook keys, newest first, from base64
// items; blank items (a trailing newline or comma) are skipped. Errors name
// the item's position, never its value: a key does not reach a log.
func parseWebhookKeys(items []string) ([][]byte, error) {
	var keys [][]byte
	seen := map[string]bool{}
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, err := base64.StdEncoding.DecodeString(item)
		if err != nil || len(key) != banking.WebhookKeySize {
			return nil, fmt.Errorf("key %d: want base64 of %d bytes", i+1, banking.WebhookKeySize)
		}
		if seen[string(key)] {
			return nil, fmt.Errorf("key %d is given twice", i+1)
		}
		seen[string(key)] = true
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, errors.New("no key")
	}
	return keys, nil
}

// reseal is `partnerapi banking webhook reseal`: every partner's secret
// re-sealed under the newest key, after which the older keys can be
// dropped. It prints the newest key's id and the counts; a secret that
// opens under none of the keys fails the command, by client_id.
func reseal(ctx context.Context, hooks *banking.Webhooks) (banking.ResealReport, error) {
	rep, err := hooks.Reseal(ctx)
	if err != nil {
		return rep, err
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("webhook secrets of %s open under none of the given keys (resealed %d): keep the key that sealed them in --banking-webhook-key",
			strings.Join(rep.Failed, ", "), rep.Resealed)
	}
	return rep, nil
}

package main

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
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

// webhookRootCAs is the pool receivers' certificates are checked against:
// the system's roots and the CA certificates of the PEM file, so that a
// receiver whose certificate an own CA issued is trusted without
// replacing the system's bundle for the whole process (SSL_CERT_FILE, which
// Go reads on Linux alone, would also stop public receivers' CAs from being
// trusted unless the file repeats them). No file: nil, the system's roots.
func webhookRootCAs(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pemData, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}

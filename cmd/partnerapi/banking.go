package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"partnerapi/api"
	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// bankingModule wires the banking API.
type bankingModule struct {
	jwsClients string // client_ids that must send card limits as JWS (banking_cards_cli.go)
	timeZone   string // bank time zone of card-limit expiry
	contour    string
	payments   paymentFlags // banking_payments.go
	jwsKey     string       // PEM of the bank's signing key (banking_jws_key.go)
	secretDays int          // lifetime of client secrets set by change-client-secret (banking_cli.go)
	idTokenAlg string       // gost34.10-2012 or RS256 (banking_jws_key.go)
	idTokenRSA string       // PEM of the RS256 key (banking_jws_key.go)
	// jwsReversed reads card-limit JWS signatures byte-reversed (reference
	// §9.6 leaves the byte layout open: a switch in case real tokens show
	// the opposite of the CMS convention).
	jwsReversed bool
	// cardNotFound is the cause of a card's 404 (reference §15 #4).
	cardNotFound string
	prefix       string // the API's path prefix (reference §1)
	// refreshReserve is how long a used refresh token keeps working
	// (reference §3, §15 #7: 2 h, configurable).
	refreshReserve time.Duration
	// accessTTL is --banking-access-token-ttl, access tokens' and
	// id_tokens' lifetime (reference §3: an hour).
	accessTTL time.Duration
	// digest is --banking-digest, the layout of the text payments and
	// card-limit applications are signed over (reference §8, §15 #1: the
	// literal list by default, each choice switchable), read at build.
	// One server, one format.
	digest string
}

func (*bankingModule) name() string        { return "banking" }
func (*bankingModule) defaultAddr() string { return "127.0.0.1:9443" }

func (m *bankingModule) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&m.timeZone, "banking-time-zone", banking.DefaultBankZone, "IANA time zone of the bank: card limits above 0 expire at the end of the next calendar day there, and payment document dates are judged against its calendar date")
	fs.StringVar(&m.jwsClients, "banking-jws-required-clients", "", "comma-separated partner client_ids whose card-limit requests must be JWS (application/jose)")
	fs.BoolVar(&m.jwsReversed, "banking-jws-reversed", false, "read card-limit JWS signatures byte-reversed (r‖s, each little-endian) instead of the CMS convention (s‖r big-endian), reference §9.6")
	fs.StringVar(&m.cardNotFound, "banking-card-not-found-cause", bankapi.CauseCardNotFound, "cause of the 404 for an unknown card: CARD_ID_NOT_FOUND or DATA_NOT_FOUND_EXCEPTION (the provider's documents name both, reference §15 #4)")
	fs.StringVar(&m.prefix, "banking-prefix", bankapi.DefaultPrefix, "path prefix the API is served under besides the provider's /fintech/api (reference §1: {base_url} holds it), e.g. /bank/fintech/api behind a proxy path; /openapi.yaml shows it; the OAuth paths /ic/sso/... stay")
	fs.StringVar(&m.contour, "banking-contour", banking.ContourSandbox, "banking contour: sandbox, test or production")
	fs.StringVar(&m.jwsKey, "banking-jws-key", "", "PEM file with the bank's GOST private key and certificate signing JWS answers and id_tokens (default: "+bankkeys.BankKeyFile+" in the data directory, made on first use); give the same file to every process sharing one PostgreSQL")
	registerClientSecretDays(fs, &m.secretDays) // banking_cli.go
	fs.DurationVar(&m.refreshReserve, "banking-refresh-reserve", banking.RefreshReserve, "how long a used refresh token keeps working after its first use, for a client that lost the new pair (reference §3: the provider's 2h; §15 #7); 0: at once only the newest refresh token works")
	fs.DurationVar(&m.accessTTL, "banking-access-token-ttl", banking.AccessTokenTTL, "how long an access token and an id_token live (reference §3: the provider's hour; expires_in says it): whole seconds from 1s to 24h, short for testing a client's refresh")
	fs.StringVar(&m.idTokenAlg, "banking-id-token-alg", banking.IDTokenGOST, "alg of id_tokens and user-info JWTs: gost34.10-2012 (the provider's, under the --banking-jws-key key) or RS256 (newer SDK builds)")
	fs.StringVar(&m.idTokenRSA, "banking-id-token-rsa-key", "", "PEM file with the RSA private key of RS256 id_tokens (default: "+bankkeys.IDTokenRSAKeyFile+" in the data directory, made on first use); give the same file to every process sharing one PostgreSQL")
	fs.StringVar(&m.digest, "banking-digest", banking.DigestFormat{}.String(), "layout of the digest text payments and card-limit applications are signed over (reference §8), comma-separated key=value, keys left out at their defaults: order=listed|alphabetical, lines=lf|crlf, empty=keep|drop (an absent value as an empty name= line, or no line), trailing=off|on (a separator after the last line)")
	m.payments.register(fs)
}

// migrate applies the banking areas' schemas: identity first (the others
// refer to its organisations by id), then payments, then cards.
func (*bankingModule) migrate(ctx context.Context, db *sqldb.DB) error {
	if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
		return err
	}
	if err := bankingsql.MigratePayments(ctx, db); err != nil {
		return err
	}
	if err := bankingsql.MigrateCards(ctx, db); err != nil {
		return err
	}
	return nil
}

func (m *bankingModule) contourOrDefault() (string, error) {
	if m.contour == "" {
		return banking.ContourSandbox, nil
	}
	if !banking.ValidContour(m.contour) {
		return "", fmt.Errorf("--banking-contour must be sandbox, test or production, got %q", m.contour)
	}
	return m.contour, nil
}

func (m *bankingModule) build(ctx context.Context, d deps) (built, error) {
	digest, err := banking.ParseDigestFormat(m.digest)
	if err != nil {
		return built{}, fmt.Errorf("--banking-digest: %w", err)
	}
	if err := bankapi.CheckPrefix(m.prefix); err != nil {
		return built{}, err
	}
	contour, err := m.contourOrDefault()
	if err != nil {
		return built{}, err
	}
	if m.refreshReserve < 0 {
		return built{}, fmt.Errorf("--banking-refresh-reserve must be 0 or more, got %s", m.refreshReserve)
	}
	// Zero is a module built without its flags parsed: the provider's hour.
	if m.accessTTL != 0 {
		if err := checkTokenTTL("--banking-access-token-ttl", m.accessTTL); err != nil {
			return built{}, err
		}
	}
	if !bankapi.ValidCardNotFoundCause(m.cardNotFound) {
		return built{}, fmt.Errorf("--banking-card-not-found-cause must be %s or %s, got %q", bankapi.CauseCardNotFound, bankapi.CauseDataNotFound, m.cardNotFound)
	}
	if err := reportUnfoldedPaymentKeys(ctx, d.db, d.log); err != nil {
		return built{}, err
	}
	store := bankingsql.NewIdentityStore(d.db)
	identity := banking.NewIdentity(store)
	// The login throttle counts in the database, so processes sharing
	// one PostgreSQL share it and a restart keeps it.
	identity.LoginFailures = store
	if err := setClientSecretDays(identity, m.secretDays); err != nil {
		return built{}, err
	}
	identity.RefreshReserve = m.refreshReserve
	identity.AccessTTL = m.accessTTL
	key, err := bankKey(m.jwsKey, d.dataDir) // banking_jws_key.go
	if err != nil {
		return built{}, err
	}
	d.log.Info("banking: JWS signing key", "kid", key.Kid)
	identity.IDTokens, err = idTokenSigner(m.idTokenAlg, m.idTokenRSA, d.dataDir, key) // banking_jws_key.go
	if err != nil {
		return built{}, err
	}
	d.log.Info("banking: id_token signing key", "alg", identity.IDTokens.Alg, "kid", identity.IDTokens.Kid)
	// The webhook keys are read (or made) here so their identity is checked
	// with the others before anything is served; the payments' secret box
	// reads the same file again.
	hookKeys, err := webhookKeys(m.payments.webhookKey, d.dataDir) // banking_payments.go
	if err != nil {
		return built{}, err
	}
	if err := checkKeyIdentities(ctx, store, m.servedKeys(key, identity.IDTokens, hookKeys, d.dataDir), d.log); err != nil { // banking_key_check.go
		return built{}, err
	}
	if contour == banking.ContourSandbox {
		// Idempotent: inserts only what is missing, so every start (and
		// several processes starting at once) converge on one seed.
		if err := identity.SeedSandbox(ctx); err != nil {
			return built{}, err
		}
	}
	// Certificates' validity periods are checked on the identity service's
	// clock, the one /v1/crypto reports their active flag by.
	verifier := banking.NewSignatureVerifierAt(contour, store, identity.Now)
	// The digest format is logged at every start: a signature made over
	// another format's text fails, and the line tells which one is served.
	d.log.Info("banking: digest format", "format", digest.String())
	cards, err := newCards(ctx, d.db, contour, verifier, m.jwsClients, m.timeZone, m.jwsReversed, digest) // banking_cards_cli.go
	if err != nil {
		return built{}, err
	}
	// Payment document dates are the bank's calendar days in the same zone
	// as card limits' expiry (reference §5.6 counts days at the bank).
	zone, err := bankZone(m.timeZone) // banking_cards_cli.go
	if err != nil {
		return built{}, err
	}
	// The background workers' health: a log line when one starts failing
	// and one when it works again, and their series on /metrics.
	var workers *background.Metrics
	if d.metrics != nil {
		workers = background.NewMetrics(d.metrics.Registry)
	}
	pay, err := m.payments.build(d.db, d.dataDir, contour, zone, digest, banking.IdentityAccounts{Store: store}, store, verifier, key,
		workers.Worker("banking-webhooks", d.log)) // banking_payments.go
	if err != nil {
		return built{}, err
	}
	// One Gate, the payment service's, closes every business operation
	// for maintenance and keeps one table of rate-limit budgets.
	gate := pay.payments.Gate
	cards.Gate, identity.Gate = gate, gate
	mux := bankapi.NewServer(bankapi.Deps{Metrics: d.metrics, Log: d.log, Cards: cards, Payments: pay.payments, Webhooks: pay.webhooks,
		Auth:     identity,
		Identity: identity,
		JWS:      key,
		// Payment bodies sent as application/jose are checked as card-limit
		// ones are, by the same verifier (reference §9.6).
		PaymentJWS: cards.JWS(),
		// The bank's key is the test contours' CA of certificate requests
		// (banking/certreq.go); production issues none through the API.
		CertRequests:      &banking.CertRequests{Store: store, Directory: store, CA: key, Contour: contour, Gate: gate},
		CardNotFoundCause: m.cardNotFound,
		Prefix:            m.prefix,
	})
	sidecars := append(pay.sidecars, identityPurger(identity, workers.Worker("banking-identity-purge", d.log), purgeEvery, purgeTimeout))
	if pay.retention != nil {
		sidecars = append(sidecars, webhookPurger(pay.retention, workers.Worker("banking-webhook-purge", d.log), purgeEvery, purgeTimeout))
	}
	unprefix, spec := bankapi.Prefixed(m.prefix, api.Spec("banking"))
	// An unclean path (`/fintech/api//v1/payments` from a base URL ending
	// in a slash, a dot segment, a trailing slash) is routed as its clean
	// form, as the provider's nginx front merges slashes and as the
	// assistant and the smart home route them, never answered with the
	// mux's 307 HTML page; the prefix is cut from the clean path.
	prepare := web.FoldPath
	if unprefix != nil {
		prepare = func(r *http.Request) {
			web.FoldPath(r)
			unprefix(r)
		}
	}
	return built{api: web.API{
		Name:    "banking",
		Handler: mux,
		Errors:  mux.ErrorWriter(), // JWS for clients that asked for it, like the router's answers
		Health:  d.db.Ping,
		OpenAPI: spec,
		Prepare: prepare,
		// With --tls-client-ca the partners' calls need the bank-issued
		// certificate; the login form, which a person opens, does not.
		BrowserPaths: bankapi.AuthorizePaths,
	}, sidecars: sidecars}, nil
}

// reportUnfoldedPaymentKeys warns of the payment documents migration 0013
// left keyed in their partner's case (bankingsql.UnfoldedPaymentKeys): each
// is found by its exact externalId only, another case of its UUID finds
// another document or none, and only the operator, with the partner, can
// settle which is meant. It warns at every start until they are settled,
// naming the first ten; a start does not fail over them.
func reportUnfoldedPaymentKeys(ctx context.Context, db *sqldb.DB, log *slog.Logger) error {
	keys, err := bankingsql.UnfoldedPaymentKeys(ctx, db)
	if err != nil || len(keys) == 0 {
		return err
	}
	names := make([]string, 0, 10)
	for _, k := range keys[:min(len(keys), 10)] {
		names = append(names, k.OrgID+"/"+k.ExternalID)
	}
	log.Warn("banking: payment documents stored before externalIds were folded to lower case keep their key, because another document of their organisation has the same UUID in another case; each is found by its exact externalId only (table banking_payment_unfolded_keys)",
		"count", len(keys), "documents", strings.Join(names, ","))
	return nil
}

// purgeEvery is how often the identity purger runs, and purgeRetry how soon
// it runs again after a run failed (the database unavailable, say), so that
// the log and /metrics say it works again within a minute of the database's
// return rather than an hour later. purgeTimeout bounds a run: an hour's
// expired tokens go in well under a second, and a database that stopped
// answering would otherwise hold the purger, silent, until the process
// ended.
const (
	purgeEvery   = time.Hour
	purgeRetry   = time.Minute
	purgeTimeout = 5 * time.Minute
)

// identityPurger deletes dead tokens and authorization codes every interval
// (purgeEvery; tests pass less) so the identity tables hold live credentials
// only. A purge left undone meanwhile (a failed run) loses nothing, since
// expired credentials are refused whether or not their rows are gone.
func identityPurger(id *banking.Identity, health *background.Worker, interval, bound time.Duration) sidecar {
	return periodicPurger("banking-identity-purge", "banking: purged expired tokens and codes", health, interval, bound,
		func(ctx context.Context) (int64, bool, error) {
			n, err := id.Purge(ctx)
			return n, false, err
		})
}

// webhookPurger deletes the finished webhook events past the retention
// every interval (purgeEvery), batch by batch (banking.WebhookRetention),
// and again after purgeRetry while a run stopped with more to do.
func webhookPurger(r *banking.WebhookRetention, health *background.Worker, interval, bound time.Duration) sidecar {
	return periodicPurger("banking-webhook-purge", "banking: purged finished webhook events past the retention", health, interval, bound, r.Purge)
}

// periodicPurger runs purge every interval until stopped, the first run at
// once. A failed run is reported to health, which logs the first failure
// and the recovery once each, and is retried after purgeRetry (or
// interval, if shorter); so is a run that stopped with more to do (a
// backlog it deletes batch by batch). A run ends within bound
// (background.Bounded), failed if the database has not answered by then.
// A run that deleted something says how many under done.
func periodicPurger(name, done string, health *background.Worker, interval, bound time.Duration, purge func(context.Context) (n int64, more bool, err error)) sidecar {
	stopping := make(chan struct{})
	stopped := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	return sidecar{
		name: name,
		serve: func() error {
			defer close(stopped)
			t := time.NewTimer(0)
			defer t.Stop()
			for {
				select {
				case <-stopping:
					return nil
				case <-t.C:
				}
				var n int64
				var more bool
				err := background.Bounded(ctx, bound, func(ctx context.Context) (err error) {
					n, more, err = purge(ctx)
					return err
				})
				if ctx.Err() != nil {
					return nil
				}
				health.Report(err)
				next := interval
				if err != nil || more {
					next = min(purgeRetry, interval)
				}
				if err == nil && n > 0 {
					health.Log().Info(done, "count", n)
				}
				t.Reset(next)
			}
		},
		stop: func(sctx context.Context) error {
			close(stopping)
			defer cancel()
			select {
			case <-stopped:
				return nil
			case <-sctx.Done():
				return sctx.Err()
			}
		},
	}
}

// runBanking is `partnerapi banking ...`: provisioning commands
// (banking_cli.go).
func runBanking(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	if len(args) > 0 && args[0] == "webhook" {
		return runBankingWebhook(ctx, args, getenv, io) // banking_payments.go
	}
	if len(args) > 0 && args[0] == "jws-certificate" {
		return runBankingJWSCertificate(ctx, args[1:], getenv, io) // banking_jws_key.go
	}
	if len(args) > 0 && args[0] == "id-token-key" {
		return runBankingIDTokenKey(ctx, args[1:], getenv, io) // banking_jws_key.go
	}
	if len(args) > 0 && (args[0] == "card" || args[0] == "clock") {
		return cliErr(runBankingCards(ctx, args, getenv, io)) // banking_cards_cli.go
	}
	return runBankingCLI(ctx, args, getenv, io)
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/sqldb"
)

// paymentFlags configures the payment area of the banking API.
type paymentFlags struct {
	signingHost   string
	checkDays     int
	rate          float64
	burst         int
	maintenance   bool
	budgetRules   bool
	checksums     string
	webhookURL    string
	webhookSecret string
	// webhookFormat is the body format of webhooks to the default URL
	// (partners with their own setting choose theirs).
	webhookFormat string
	webhookEvery  time.Duration
	webhookKey    string
	// webhookAttempts, webhookBackoff and webhookMaxBackoff are the retry
	// schedule of a webhook delivery (reference §12 leaves it to the bank:
	// configurable), checked by webhookRetry when the service starts.
	webhookAttempts   int
	webhookBackoff    time.Duration
	webhookMaxBackoff time.Duration
	// webhookPause and webhookMaxPause are a partner's pause after a
	// delivery with no answer or a 429/503 (banking.WebhookDispatcher's
	// PauseBase and PauseMax); a zero pause pauses no partner.
	webhookPause, webhookMaxPause time.Duration
	// webhookPerPartner is how many deliveries to one receiver run at
	// once, a partner's own or the default its partners share
	// (banking.WebhookDispatcher's PerEndpoint; 0: its default). The flag
	// keeps its name from when the cap was per partner.
	webhookPerPartner int
	// webhookMaxAge is how old an event may be and still be sent
	// (banking.WebhookDispatcher's MaxAge; 0: no limit).
	webhookMaxAge time.Duration
	// webhookRetention is how long finished webhook events and their
	// delivery log are kept (0: for good).
	webhookRetention time.Duration
	// webhookAllowPrivate lets webhooks reach private and local addresses
	// (banking_webhook_keys.go has the policy).
	webhookAllowPrivate bool
	// webhookCA is --banking-webhook-ca: a PEM bundle of the authorities
	// whose receiver certificates are trusted besides the system's.
	webhookCA string
	// commitDelay bounds the wait of the creates' group commit for create
	// requests already under way (bankingsql.PaymentStore.WithCommitDelay).
	commitDelay time.Duration
}

// defaultCommitDelay is --banking-commit-delay's default: a few hundred µs
// is short against a create's own latency (a fsync, 1–2 ms here) and lets
// the requests being validated while a batch forms join it.
const defaultCommitDelay = 200 * time.Microsecond

func (f *paymentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.signingHost, "banking-signing-host", "https://fintech-test.sberbank.ru", "host of the signer's page in invoice-draft links")
	fs.IntVar(&f.checkDays, "banking-invoice-checkerror-days", 10, "payment orders and invoice drafts dated this many days ahead or more get CHECKERROR, signed or not (negative: off)")
	fs.Float64Var(&f.rate, "banking-payment-rate", 10, "business operations (payments, cards, client-info, crypto, webhook settings, certificate requests) per second per token and operation (0: unlimited)")
	fs.IntVar(&f.burst, "banking-payment-burst", 20, "burst of business operations per token and operation")
	fs.BoolVar(&f.budgetRules, "banking-budget-rules", true, "apply the §5.8 logical controls to budget payments (payee account 03…): field 101, treasury routing, UIN of 31/33, OKTMO, ЕНП")
	fs.StringVar(&f.checksums, "banking-checksum-failures", string(banking.ChecksCheckError), "failed check digits and logical controls (INN, account key, UIN, budget rules): checkerror (stored, 201 CHECKERROR) or reject (400 VALIDATION_FAULT)")
	fs.BoolVar(&f.maintenance, "banking-maintenance", false, "answer every business operation (payments, cards, client-info, crypto, webhook settings, certificate requests; not OAuth) with 503 UNAVAILABLE_RESOURCE_EXCEPTION")
	fs.StringVar(&f.webhookURL, "banking-webhook-url", "", "default URL of final payment statuses for partners without their own (empty: their statuses stay queued)")
	fs.StringVar(&f.webhookSecret, "banking-webhook-secret", "", "HMAC-SHA256 key signing webhooks to the default URL (X-Signature); set it via PARTNERAPI_BANKING_WEBHOOK_SECRET")
	f.webhookFormat = banking.WebhookFormatJSON
	fs.Func("banking-webhook-format", "body format of webhooks to the default URL: json, or jose (the same JSON as a compact JWS under the bank's key, application/jose) (default json)", func(v string) error {
		if v != banking.WebhookFormatJSON && v != banking.WebhookFormatJOSE {
			return errors.New("want json or jose")
		}
		f.webhookFormat = v
		return nil
	})
	fs.DurationVar(&f.webhookEvery, "banking-webhook-interval", 2*time.Second, "how often the webhook outbox is drained")
	fs.StringVar(&f.webhookKey, "banking-webhook-key", "", "base64 of the 32-byte keys sealing partners' webhook secrets, comma-separated, newest first: the newest seals, each opens (default: "+webhookKeyFile+" in the data directory, one key a line, made on first use); set it via PARTNERAPI_BANKING_WEBHOOK_KEY when processes share PostgreSQL")
	fs.DurationVar(&f.commitDelay, "banking-commit-delay", defaultCommitDelay, "longest wait of a payment-create commit for create requests already under way, so one fsync covers more documents (0: commit at once; like PostgreSQL's commit_delay)")
	fs.IntVar(&f.webhookAttempts, "banking-webhook-max-attempts", defaultWebhookAttempts, "attempts of one webhook delivery, the first included, before it is given up (≥ 1)")
	fs.DurationVar(&f.webhookBackoff, "banking-webhook-backoff", defaultWebhookBackoff, "wait before the second attempt of a webhook delivery; it doubles per attempt up to --banking-webhook-max-backoff (> 0)")
	fs.DurationVar(&f.webhookMaxBackoff, "banking-webhook-max-backoff", defaultWebhookMaxBackoff, "longest wait between two attempts of a webhook delivery (≥ --banking-webhook-backoff)")
	fs.DurationVar(&f.webhookPause, "banking-webhook-pause", defaultWebhookPause, "pause of a partner's webhooks after a delivery with no answer or a 429/503: its other due events wait that long with no attempt counted; doubles per such delivery in a row up to --banking-webhook-max-pause (0: no pause)")
	fs.DurationVar(&f.webhookMaxPause, "banking-webhook-max-pause", defaultWebhookMaxPause, "longest pause of a partner's webhooks (≥ --banking-webhook-pause)")
	fs.IntVar(&f.webhookPerPartner, "banking-webhook-per-partner", 2, "webhook deliveries under way at once to one receiver (a partner's own URL, or the default URL all partners without one share), of the 8 the outbox runs (1–8): a receiver that hangs holds no more")
	fs.DurationVar(&f.webhookMaxAge, "banking-webhook-max-age", defaultWebhookMaxAge, "age (from when it was queued, not its eventTime) past which a pending webhook is failed for good instead of sent late, its delivery log saying so; after it the partner polls the payment's state (reference §12) (0: no limit)")
	fs.DurationVar(&f.webhookRetention, "banking-webhook-retention", defaultWebhookRetention, "how long a finished webhook event (delivered, or failed for good) stays in the outbox and the partner's delivery log before it is deleted with its attempts; pending and parked events stay whatever their age (0: keep them all)")
	fs.BoolVar(&f.webhookAllowPrivate, "banking-webhook-allow-private", false, "let webhook URLs reach loopback, private, link-local and multicast addresses (off: refused when a URL is set and again when it is dialled)")
	fs.StringVar(&f.webhookCA, "banking-webhook-ca", "", "PEM file of CA certificates trusted for webhook receivers' HTTPS besides the system's (an own or corporate CA, a self-signed receiver); read at start")
}

// The webhook retry schedule's defaults: ten attempts, 5 s before the
// second, doubling to at most an hour between two (about 5.5 hours in all,
// inside the 24 hours after which a partner is told to poll, §12).
const (
	defaultWebhookAttempts   = 10
	defaultWebhookBackoff    = 5 * time.Second
	defaultWebhookMaxBackoff = time.Hour
	defaultWebhookPause      = 5 * time.Second
	defaultWebhookMaxPause   = 5 * time.Minute
	// defaultWebhookMaxAge: reference §12 has a partner with no webhook
	// within 24 h poll the payment's state instead.
	defaultWebhookMaxAge = 24 * time.Hour
	// defaultWebhookRetention keeps a month of finished events: a
	// partner's delivery log still shows what happened to a webhook well
	// past the day after which §12 has it poll the payment's state.
	defaultWebhookRetention = 30 * 24 * time.Hour
)

// webhookPauses is the dispatcher's PauseBase and PauseMax from the
// flags: a zero pause is none (PauseBase < 0), and a zero paymentFlags
// (flags never parsed) means the defaults.
func (f *paymentFlags) webhookPauses() (base, max time.Duration, err error) {
	switch {
	case f.webhookPause == 0 && f.webhookMaxPause == 0:
		return 0, 0, nil // the dispatcher's own defaults
	case f.webhookPause < 0:
		return 0, 0, fmt.Errorf("--banking-webhook-pause must be ≥ 0, got %s", f.webhookPause)
	case f.webhookPause == 0:
		return -1, 0, nil
	case f.webhookMaxPause < f.webhookPause:
		return 0, 0, fmt.Errorf("--banking-webhook-max-pause (%s) must be ≥ --banking-webhook-pause (%s)", f.webhookMaxPause, f.webhookPause)
	}
	return f.webhookPause, f.webhookMaxPause, nil
}

// opLimiter is the checked rate limit of the business operations
// (--banking-payment-rate and --banking-payment-burst, banking.NewOpLimiter).
func (f *paymentFlags) opLimiter() (*banking.OpLimiter, error) {
	l, err := banking.NewOpLimiter(f.rate, f.burst)
	if err != nil {
		return nil, fmt.Errorf("--banking-payment-rate/--banking-payment-burst: %w", err)
	}
	return l, nil
}

// webhookRetry is the checked retry schedule of the webhook flags. Flags
// never parsed (modules tests build from a zero paymentFlags) mean the
// defaults; values given are refused at start when the schedule they make
// is impossible: no attempt at all, no wait, or a ceiling under the first
// wait.
func (f *paymentFlags) webhookRetry() (attempts int, backoff, maxBackoff time.Duration, err error) {
	attempts, backoff, maxBackoff = f.webhookAttempts, f.webhookBackoff, f.webhookMaxBackoff
	if attempts == 0 && backoff == 0 && maxBackoff == 0 {
		return defaultWebhookAttempts, defaultWebhookBackoff, defaultWebhookMaxBackoff, nil
	}
	switch {
	case attempts < 1:
		return 0, 0, 0, fmt.Errorf("--banking-webhook-max-attempts must be ≥ 1, got %d", attempts)
	case backoff <= 0:
		return 0, 0, 0, fmt.Errorf("--banking-webhook-backoff must be > 0, got %s", backoff)
	case maxBackoff < backoff:
		return 0, 0, 0, fmt.Errorf("--banking-webhook-max-backoff (%s) must be ≥ --banking-webhook-backoff (%s)", maxBackoff, backoff)
	}
	return attempts, backoff, maxBackoff, nil
}

// defaultWebhook is the deployment's webhook target for partners without
// their own: --banking-webhook-url, its secret and its body format.
func (f *paymentFlags) defaultWebhook() banking.WebhookTarget {
	format := f.webhookFormat
	if format == "" {
		// Flags never parsed (modules that tests build from a zero
		// paymentFlags) mean the default; the command line's values are
		// checked when parsed (register).
		format = banking.WebhookFormatJSON
	}
	return banking.WebhookTarget{URL: f.webhookURL, Secret: []byte(f.webhookSecret), Format: format}
}

// paymentArea is what build makes: the services and the dispatcher that
// runs beside the listener.
type paymentArea struct {
	payments   *banking.PaymentService
	webhooks   *banking.Webhooks
	dispatcher *banking.WebhookDispatcher
	// retention purges finished events (--banking-webhook-retention);
	// nil when they are kept for good.
	retention *banking.WebhookRetention
	sidecars  []sidecar
}

// build makes the payment service, the partners' webhook settings and the
// outbox dispatcher. The dispatcher always runs: a partner may set its own
// URL at any time; without a deployment URL only such partners' events are
// taken from the outbox. jws is the bank's key, signing the bodies of
// partners whose webhook format is jose; zone is the bank's time zone of
// document dates (nil: banking.DefaultBankZone); digest the layout of the
// documents' digests (--banking-digest).
// health hears the outcome of every pass of the dispatcher.
func (f *paymentFlags) build(db *sqldb.DB, dataDir, contour string, zone *time.Location, digest banking.DigestFormat, accounts banking.AccountLookup, identity banking.IdentityStore, verifier banking.SignatureVerifier, jws *banking.BankKey, health *background.Worker) (paymentArea, error) {
	checksums, err := banking.ParseChecksumMode(f.checksums)
	if err != nil {
		return paymentArea{}, fmt.Errorf("--banking-checksum-failures: %w", err)
	}
	box, err := f.secretBox(dataDir)
	if err != nil {
		return paymentArea{}, err
	}
	if f.commitDelay < 0 {
		return paymentArea{}, fmt.Errorf("--banking-commit-delay must be ≥ 0")
	}
	limits, err := f.opLimiter()
	if err != nil {
		return paymentArea{}, err
	}
	attempts, backoff, maxBackoff, err := f.webhookRetry()
	if err != nil {
		return paymentArea{}, err
	}
	pauseBase, pauseMax, err := f.webhookPauses()
	if err != nil {
		return paymentArea{}, err
	}
	if f.webhookPerPartner < 0 || f.webhookPerPartner > 8 {
		return paymentArea{}, fmt.Errorf("--banking-webhook-per-partner must be 1–8 (0: the default, 2), got %d", f.webhookPerPartner)
	}
	if f.webhookMaxAge < 0 {
		return paymentArea{}, fmt.Errorf("--banking-webhook-max-age must be ≥ 0 (0: no limit), got %s", f.webhookMaxAge)
	}
	if f.webhookRetention < 0 {
		return paymentArea{}, fmt.Errorf("--banking-webhook-retention must be ≥ 0 (0: keep them all), got %s", f.webhookRetention)
	}
	store := bankingsql.NewPaymentStore(db).WithCommitDelay(f.commitDelay)
	maint := &banking.Maintenance{}
	maint.Set(f.maintenance)
	days := f.checkDays
	if days == 0 {
		days = -1 // 0 would mean the default inside PaymentConfig
	}
	svc := &banking.PaymentService{Store: store, Accounts: accounts, Verifier: verifier, Users: identity, Payees: identity,
		Config: banking.PaymentConfig{SigningHost: f.signingHost, CheckErrorDaysAhead: days,
			SkipBudgetRules: !f.budgetRules, ChecksumFailures: checksums, Contour: contour, Location: zone, Digest: digest},
		// The one Gate of the API: banking.go hands it to every other
		// service with business operations (cards, identity's
		// client-info and crypto info, certificate requests).
		Gate: &banking.Gate{Limits: limits, Maintenance: maint}}
	urls := f.webhookPolicy(contour)
	if urls.RootCAs, err = webhookRootCAs(f.webhookCA); err != nil {
		return paymentArea{}, fmt.Errorf("--banking-webhook-ca: %w", err)
	}
	if f.webhookURL != "" {
		if err := urls.Check(context.Background(), f.webhookURL); err != nil {
			return paymentArea{}, fmt.Errorf("--banking-webhook-url: %w", cliErr(err))
		}
	}
	hooks := &banking.Webhooks{Store: store, Box: box, URLs: urls, Default: f.defaultWebhook(), Gate: svc.Gate}
	every := f.webhookEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	// On shutdown the dispatcher takes no new batch and starts no new
	// delivery: the events of the batch it holds not yet started go back
	// at once for the other replicas on the database (or the next start).
	// The deliveries under way go on for the grace period, so that a
	// partner's answer under way is heard and recorded rather than cut off
	// (and sent again after the restart); one still under way when the
	// grace ends is cancelled and comes back when its lease ends.
	ctx, cancel := context.WithCancel(context.Background())
	stopping := make(chan struct{})
	disp := &banking.WebhookDispatcher{Outbox: store, Sender: &bankapi.WebhookSender{Targets: hooks, URLs: urls, JWS: jws}, ConfiguredOnly: f.webhookURL == "",
		MaxAttempts: attempts, BaseBackoff: backoff, MaxBackoff: maxBackoff, PauseBase: pauseBase, PauseMax: pauseMax,
		PerEndpoint: f.webhookPerPartner, MaxAge: f.webhookMaxAge, Stopping: stopping}
	var stopOnce sync.Once
	done := make(chan struct{})
	var retention *banking.WebhookRetention
	if f.webhookRetention > 0 {
		retention = &banking.WebhookRetention{Outbox: store, Keep: f.webhookRetention}
	}
	return paymentArea{payments: svc, webhooks: hooks, dispatcher: disp, retention: retention, sidecars: []sidecar{{
		name: "banking-webhooks",
		serve: func() error {
			defer close(done)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stopping:
					return nil
				default:
				}
				// A pass that fails (the database unavailable, say) leaves
				// its events in the outbox: the next tick tries again, and
				// health logs the first failure and the recovery once each.
				if _, err := disp.RunOnce(ctx); ctx.Err() == nil {
					health.Report(err)
				}
				select {
				case <-stopping:
					return nil
				case <-t.C:
				}
			}
		},
		stop: func(sctx context.Context) error {
			stopOnce.Do(func() { close(stopping) })
			select {
			case <-done:
			case <-sctx.Done():
			}
			cancel()
			return nil
		},
	}}}, nil
}

// webhookKeyFile is the webhook key's file in the data directory, made on
// first use when --banking-webhook-key is not given.
const webhookKeyFile = "banking-webhook.key"

// secretBox is the box sealing partners' webhook secrets: the keys of
// --banking-webhook-key (base64 of 32 bytes each, comma-separated, newest
// first), else the data directory's key file (one key a line, newest
// first), created with a random key on first use.
func (f *paymentFlags) secretBox(dataDir string) (*banking.SecretBox, error) {
	keys, err := webhookKeys(f.webhookKey, dataDir)
	if err != nil {
		return nil, err
	}
	return banking.NewSecretBox(keys...)
}

func webhookKeys(flagValue, dataDir string) ([][]byte, error) {
	if flagValue != "" {
		keys, err := parseWebhookKeys(strings.Split(flagValue, ","))
		if err != nil {
			return nil, fmt.Errorf("--banking-webhook-key: %w", err)
		}
		return keys, nil
	}
	if dataDir == "" {
		// No data directory (an in-process bench on PostgreSQL): a key for
		// this process only, rather than a key file in the working directory.
		key := make([]byte, banking.WebhookKeySize)
		_, _ = rand.Read(key)
		return [][]byte{key}, nil
	}
	path := filepath.Join(dataDir, webhookKeyFile)
	if raw, err := os.ReadFile(path); err == nil {
		keys, err := parseWebhookKeys(strings.Split(string(raw), "\n"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return keys, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("webhook key: %w", err)
	}
	key := make([]byte, banking.WebhookKeySize)
	_, _ = rand.Read(key)
	// Written whole under another name and linked into place: replicas
	// starting at once on one data directory (several serves on one
	// PostgreSQL) each try, one key wins and the others read it. Made
	// in place (O_EXCL, then written), the others could read the file
	// before the key was in it and fail to start on "no key", as would
	// every start after a crash between the two steps.
	err := bankkeys.CreateKeyFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"))
	if errors.Is(err, fs.ErrExist) {
		return webhookKeys("", dataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("webhook key: %w", err)
	}
	return [][]byte{key}, nil
}

const bankingWebhookUsage = `usage: partnerapi banking webhook COMMAND --client-id CLIENT_ID [flags]
  set --url URL [--secret S] [--format json|jose]
                                 the partner's own webhook (a secret is generated and shown once if none is stored;
                                 jose: bodies are JWS under the bank's key; the format, omitted, is kept, json at first)
  show                           the partner's setting (never the secret)
  delete                         remove the partner's own setting (its events go to --banking-webhook-url, if set, else wait)
  deliveries [--limit 50]        the partner's delivery log, newest first
  reseal                         (no --client-id) re-seal every stored secret under the newest --banking-webhook-key`

// runBankingWebhook is `partnerapi banking webhook ...`.
func runBankingWebhook(ctx context.Context, args []string, getenv func(string) string, sio stdio) error {
	if len(args) < 2 {
		return errors.New(bankingWebhookUsage)
	}
	name, rest := args[1], args[2:]
	fset := flag.NewFlagSet("banking webhook "+name, flag.ContinueOnError)
	var store storeConfig
	store.register(fset)
	var pf paymentFlags
	pf.register(fset) // the webhook keys, URL policy and deployment default, as serve reads them
	contour := fset.String("banking-contour", banking.ContourSandbox, "banking contour: sandbox, test or production (production: https URLs only)")
	clientID := fset.String("client-id", "", "partner application (OAuth client_id)")
	var rawURL, secret, format string
	limit := 50
	switch name {
	case "set":
		fset.StringVar(&rawURL, "url", "", "URL receiving the partner's final payment statuses")
		fset.StringVar(&secret, "secret", "", "HMAC-SHA256 key of X-Signature (default: keep the stored one, or generate)")
		fset.StringVar(&format, "format", "", "webhook body: json, or jose (the JWS of the JSON under the bank's key) (default: keep the stored one, or json)")
	case "show", "delete", "reseal":
	case "deliveries":
		fset.IntVar(&limit, "limit", 50, "how many newest deliveries (1..500)")
	default:
		return errors.New(bankingWebhookUsage)
	}
	if err := parseFlags(fset, rest, getenv); err != nil {
		return err
	}
	if (*clientID == "") != (name == "reseal") || fset.NArg() > 0 {
		return errors.New(bankingWebhookUsage)
	}
	if !banking.ValidContour(*contour) {
		return fmt.Errorf("--banking-contour must be sandbox, test or production, got %q", *contour)
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
		return err
	}
	if err := bankingsql.MigratePayments(ctx, db); err != nil {
		return err
	}
	if name != "reseal" {
		if _, err := bankingsql.NewIdentityStore(db).GetApp(ctx, *clientID); err != nil {
			if errors.Is(err, banking.ErrNotFound) {
				return fmt.Errorf("no partner application %q", *clientID)
			}
			return err
		}
	}
	box, err := pf.secretBox(store.DataDir)
	if err != nil {
		return err
	}
	hooks := &banking.Webhooks{Store: bankingsql.NewPaymentStore(db), Box: box, URLs: pf.webhookPolicy(*contour), Default: pf.defaultWebhook()}
	var out any
	switch name {
	case "set":
		var sp *string
		if secret != "" {
			sp = &secret
		}
		// An empty --format is "not given", as for --secret: the stored
		// format is kept.
		var fp *string
		if format != "" {
			fp = &format
		}
		out, err = hooks.Set(ctx, *clientID, rawURL, sp, fp)
	case "show":
		out, err = hooks.Get(ctx, *clientID)
	case "delete":
		// What the partner sees after it: the default's setting or none.
		if err = hooks.Delete(ctx, *clientID); err == nil {
			out, err = hooks.Get(ctx, *clientID)
		}
	case "deliveries":
		if limit < 1 || limit > 500 {
			return errors.New("--limit must be 1..500")
		}
		var ds []banking.WebhookDelivery
		ds, err = hooks.Deliveries(ctx, *clientID, limit)
		out = bankapi.DeliveriesJSON(ds)
	case "reseal":
		if out, err = reseal(ctx, hooks); err == nil {
			err = followResealedKey(ctx, bankingsql.NewIdentityStore(db), pf.webhookKey, store.DataDir) // banking_key_check.go
		}
	}
	if err != nil {
		return cliErr(err)
	}
	return json.NewEncoder(sio.out).Encode(out)
}

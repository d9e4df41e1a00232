package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/banking/bankingsql"
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
	webhookEvery  time.Duration
}

func (f *paymentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.signingHost, "banking-signing-host", "https://fintech-test.sberbank.ru", "host of the signer's page in invoice-draft links")
	fs.IntVar(&f.checkDays, "banking-invoice-checkerror-days", 10, "invoice drafts dated this many days ahead or more get CHECKERROR (negative: off)")
	fs.Float64Var(&f.rate, "banking-payment-rate", 10, "payment operations per second per token and operation (0: unlimited)")
	fs.IntVar(&f.burst, "banking-payment-burst", 20, "burst of payment operations per token and operation")
	fs.BoolVar(&f.budgetRules, "banking-budget-rules", true, "apply the §5.8 logical controls to budget payments (payee account 03…): field 101, treasury routing, UIN of 31/33, OKTMO, ЕНП")
	fs.StringVar(&f.checksums, "banking-checksum-failures", string(banking.ChecksCheckError), "failed check digits and logical controls (INN, account key, UIN, budget rules): checkerror (stored, 201 CHECKERROR) or reject (400 VALIDATION_FAULT)")
	fs.BoolVar(&f.maintenance, "banking-maintenance", false, "answer payment operations with 503 UNAVAILABLE_RESOURCE_EXCEPTION")
	fs.StringVar(&f.webhookURL, "banking-webhook-url", "", "partner URL receiving final payment statuses (empty: statuses stay queued)")
	fs.StringVar(&f.webhookSecret, "banking-webhook-secret", "", "HMAC-SHA256 key signing webhooks (X-Signature); set it via PARTNERAPI_BANKING_WEBHOOK_SECRET")
	fs.DurationVar(&f.webhookEvery, "banking-webhook-interval", 2*time.Second, "how often the webhook outbox is drained")
}

// build makes the payment service and, with a webhook URL, the outbox
// dispatcher that runs beside the listener.
func (f *paymentFlags) build(db *sqldb.DB, accounts banking.AccountLookup, verifier banking.SignatureVerifier) (*banking.PaymentService, []sidecar, error) {
	checksums, err := banking.ParseChecksumMode(f.checksums)
	if err != nil {
		return nil, nil, fmt.Errorf("--banking-checksum-failures: %w", err)
	}
	store := bankingsql.NewPaymentStore(db)
	maint := &banking.Maintenance{}
	maint.Set(f.maintenance)
	days := f.checkDays
	if days == 0 {
		days = -1 // 0 would mean the default inside PaymentConfig
	}
	svc := &banking.PaymentService{Store: store, Accounts: accounts, Verifier: verifier,
		Config: banking.PaymentConfig{SigningHost: f.signingHost, CheckErrorDaysAhead: days,
			SkipBudgetRules: !f.budgetRules, ChecksumFailures: checksums},
		Limits:      &banking.OpLimiter{Rate: rate.Limit(f.rate), Burst: f.burst},
		Maintenance: maint}
	if f.webhookURL == "" {
		return svc, nil, nil
	}
	disp := &banking.WebhookDispatcher{Outbox: store, Sender: &bankapi.WebhookSender{URL: f.webhookURL, Secret: []byte(f.webhookSecret)}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	return svc, []sidecar{{
		name: "banking-webhooks",
		serve: func() error {
			defer close(done)
			disp.Run(ctx, f.webhookEvery)
			return nil
		},
		stop: func(sctx context.Context) error {
			cancel()
			select {
			case <-done:
			case <-sctx.Done():
			}
			return nil
		},
	}}, nil
}

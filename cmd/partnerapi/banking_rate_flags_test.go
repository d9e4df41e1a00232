package main

import (
	"flag"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A rate limit that would refuse every business operation for good once
// its burst is spent (reference §13's 429, values configurable) stops the
// service at start, naming the flag (banking.NewOpLimiter).
func TestBankingRateLimitFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--banking-payment-rate", "-1"},
		{"--banking-payment-rate", "NaN"},
		{"--banking-payment-burst", "-3"},
	} {
		var f paymentFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := f.build(nil, t.TempDir(), banking.ContourSandbox, nil, banking.DigestFormat{}, nil, nil, nil, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "--banking-payment-rate/--banking-payment-burst") {
			t.Fatalf("%v: got %v, want a refusal naming the flags", args, err)
		}
	}
}

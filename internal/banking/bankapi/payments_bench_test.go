package bankapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

// benchIdentity is an identity store holding one access token and the
// sandbox account, in memory: the benchmark measures the transport, the
// platform and the domain code of a create, not a database.
type benchIdentity struct {
	banking.IdentityStore // nil: the benchmark calls only what is below
	tok                   banking.Token
	acc                   banking.Account
	certs                 map[string]banking.Certificate
}

func (s *benchIdentity) GetToken(_ context.Context, hash string) (banking.Token, error) {
	if hash != s.tok.Hash {
		return banking.Token{}, banking.ErrNotFound
	}
	return s.tok, nil
}

func (s *benchIdentity) GetAccount(_ context.Context, number string) (banking.Account, error) {
	if number != s.acc.Number {
		return banking.Account{}, banking.ErrNotFound
	}
	return s.acc, nil
}

// GetOrg answers the sandbox organisation, the payer whose INN a create
// compares.
func (s *benchIdentity) GetOrg(_ context.Context, id string) (banking.Organisation, error) {
	if id != banking.SandboxOrgID {
		return banking.Organisation{}, banking.ErrNotFound
	}
	return banking.Organisation{ID: id, INN: banking.SandboxOrgINN, KPP: banking.SandboxOrgKPP}, nil
}

// GetCertificate answers the seeded sandbox certificates, which a sandbox
// signature's check reads for their active flag and validity period as the
// served store does.
func (s *benchIdentity) GetCertificate(_ context.Context, uuid string) (banking.Certificate, error) {
	c, ok := s.certs[strings.ToLower(uuid)]
	if !ok {
		return banking.Certificate{}, banking.ErrNotFound
	}
	return c, nil
}

// benchPayments stores nothing: CreatePayment returns at once. Like the
// SQL store, it takes a fully signed document's walk whole and keeps
// nothing it is handed past its create.
type benchPayments struct{ banking.PaymentStore }

func (benchPayments) BorrowsPayment() {}

func (benchPayments) CreatePayment(context.Context, *banking.StoredPayment, []banking.StatusChange) error {
	return nil
}

func (benchPayments) CreateProcessed(context.Context, *banking.StoredPayment, time.Time) error {
	return nil
}

// benchRespWriter is a reusable ResponseWriter, so the benchmark measures
// the handler stack and not a recorder's allocations.
type benchRespWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *benchRespWriter) Header() http.Header  { return w.h }
func (w *benchRespWriter) WriteHeader(code int) { w.status = code }
func (w *benchRespWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// BenchmarkCreatePaymentHandler is one POST /v1/payments through the whole
// handler stack the listener serves (request id, access log to io.Discard
// through slog's text handler, recovery, limits, routing, metrics, token
// authentication, gate, decode, validation, digest, encoding, the 201)
// with a store that keeps nothing, as a sole-signed sandbox document.
// Its identity store is either in memory ("memory") or the served SQL
// store on SQLite ("cached"), whose token, account, organisation and
// certificate lookups, hot, come from its read caches as under load.
// Run it with -benchmem: allocations are what drives the GC under load.
// cpu-ns/op is the process's CPU per create.
//
// It runs at the GC target serve gives a process without the LLM engine
// (400, cmd/partnerapi/gc.go) unless GOGC is set: at the test binary's
// default of 100 the collector's preemptions took ~20 % of its profile
// (runtime.asyncPreempt) against ~0.5 % under serve, which misranked the
// handler's own costs.
func BenchmarkCreatePaymentHandler(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	b.Run("memory", func(b *testing.B) {
		const token = "11111111-2222-4333-8444-555555555555-1"
		ids := &benchIdentity{
			tok: banking.Token{Hash: banking.HashSecret(token), Kind: banking.TokenAccess, ClientID: banking.SandboxClientID,
				OrgID: banking.SandboxOrgID, UserID: banking.SandboxUserID, Scopes: []string{banking.ScopePayDocRU},
				ExpiresAt: time.Now().Add(time.Hour)},
			acc:   banking.Account{Number: banking.SandboxAccount, OrgID: banking.SandboxOrgID, BIC: banking.SandboxBIC, CorrAccount: banking.SandboxCorrAccount},
			certs: map[string]banking.Certificate{},
		}
		seed, err := banking.SandboxSeed()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range seed.Certs {
			ids.certs[c.UUID] = c
		}
		benchCreatePayment(b, ids, token)
	})
	b.Run("cached", func(b *testing.B) {
		ctx := context.Background()
		db := storetest.SQLite(b)
		if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
			b.Fatal(err)
		}
		ids := bankingsql.NewIdentityStore(db)
		identity := banking.NewIdentity(ids)
		if err := identity.SeedSandbox(ctx); err != nil {
			b.Fatal(err)
		}
		tok, err := identity.IssueTokens(ctx, banking.SandboxClientID, banking.SandboxOrgID, banking.SandboxUserID,
			[]string{banking.ScopePayDocRU})
		if err != nil {
			b.Fatal(err)
		}
		benchCreatePayment(b, ids, tok.AccessToken)
	})
}

// benchCreatePayment runs BenchmarkCreatePaymentHandler's creates with
// ids as the identity store and token as the bearer.
func benchCreatePayment(b *testing.B, ids banking.IdentityStore, token string) {
	identity := banking.NewIdentity(ids)
	svc := &banking.PaymentService{Store: benchPayments{}, Accounts: banking.IdentityAccounts{Store: ids},
		Verifier: banking.NewSignatureVerifier(banking.ContourSandbox, ids), Gate: &banking.Gate{Maintenance: &banking.Maintenance{},
			Limits: &banking.OpLimiter{}}}
	log := slog.New(web.NewTextHandler(io.Discard, nil)) // as serve's text logs
	metrics := web.NewMetrics("bench")
	mux := NewServer(Deps{Metrics: metrics, Log: log, Auth: identity, Identity: identity, Payments: svc})
	h := web.API{Name: "banking", Handler: mux, Errors: ErrorWriter()}.Build(log, metrics)

	date := time.Now().UTC().Format(time.DateOnly)
	bodies := make([][]byte, 256)
	for i := range bodies {
		bodies[i] = banking.SandboxPaymentJSON(fmt.Sprintf("%08x-0000-4000-8000-000000000001", i), date)
	}
	u, _ := url.Parse("http://127.0.0.1:8080/fintech/api/v1/payments")
	w := &benchRespWriter{h: http.Header{}}
	rd := bytes.NewReader(nil)
	auth := "Bearer " + token
	b.ReportAllocs()
	i := 0
	cpu0 := testenv.ProcessCPU()
	for b.Loop() {
		body := bodies[i%len(bodies)]
		i++
		rd.Reset(body)
		// What net/http's server hands a handler for this request.
		r := &http.Request{Method: "POST", URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}, "Authorization": {auth}},
			Body:   io.NopCloser(rd), ContentLength: int64(len(body)), RemoteAddr: "127.0.0.1:40000",
			RequestURI: u.Path, Host: u.Host}
		r = r.WithContext(context.Background())
		clear(w.h)
		w.status = 0
		w.body.Reset()
		h.ServeHTTP(w, r)
		if w.status != http.StatusCreated {
			b.Fatalf("status %d: %s", w.status, w.body.Bytes())
		}
	}
	// The process's CPU per create, the GC's included: on a shared
	// machine ns/op also counts the time other processes held the core.
	b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

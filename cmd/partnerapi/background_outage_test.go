package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/postgres"
	"partnerapi/internal/storetest"
)

// webhookReceiver is a partner's webhook receiver in a test: it counts the
// events it accepted by externalId and answers 503 to those in refuse.
type webhookReceiver struct {
	mu       sync.Mutex
	accepted map[string]int
	events   map[string]string // externalId → X-Event-Id of the first delivery
	refuse   map[string]bool
	refused  map[string]int
}

func newWebhookReceiver(t *testing.T) (*webhookReceiver, string) {
	r := &webhookReceiver{accepted: map[string]int{}, events: map[string]string{}, refuse: map[string]bool{}, refused: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			ExternalID string `json:"externalId"`
		}
		_ = json.NewDecoder(req.Body).Decode(&ev)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.refuse[ev.ExternalID] {
			r.refused[ev.ExternalID]++
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.accepted[ev.ExternalID]++
		if id, ok := r.events[ev.ExternalID]; ok && id != req.Header.Get("X-Event-Id") {
			t.Errorf("%s delivered as %s and as %s", ev.ExternalID, id, req.Header.Get("X-Event-Id"))
		}
		r.events[ev.ExternalID] = req.Header.Get("X-Event-Id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *webhookReceiver) counts(id string) (accepted, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted[id], r.refused[id]
}

func (r *webhookReceiver) setRefuse(id string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse[id] = on
}

// eventually polls cond every 50 ms until it holds, and fails the test
// naming what after limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// metricValue is the value of the series line that begins with series
// (name and labels as /metrics writes them) on the banking listener; -1
// when there is none.
func metricValue(t *testing.T, ts *testServer, series string) float64 {
	t.Helper()
	_, body := get(t, ts.urls["banking"]+"/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The banking server's background work across a PostgreSQL outage, through
// serve on a PostgreSQL behind a proxy that goes down for a few seconds: a
// webhook the partner answered before the outage is not sent again; one
// pending when it hit (the partner answered 503) and a payment signed once
// the database is back each reach the partner once afterwards, with no
// restart; the dispatcher, ticking every 100 ms, logs one WARN line saying
// the database is unavailable and one INFO line when it works again, not a
// line per tick, never the URL's password; and /metrics counts its failed
// passes and when it last worked.
func TestServeBankingBackgroundDuringPostgresOutage(t *testing.T) {
	dbURL, _ := scratchPostgres(t, "background")
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	u.Host = proxy.addr
	u.User = url.UserPassword(u.User.Username(), storetest.DeadPassword)
	recv, recvURL := newWebhookReceiver(t)
	// A backoff longer than the time between the refused delivery and the
	// outage, so that the retry falls into the outage; no partner pause, so
	// that the retry is due at once when the database is back.
	ts := startServer(t, "--only", "banking", "--database-url", u.String(), "--banking-webhook-url", recvURL,
		"--banking-webhook-allow-private", "--banking-webhook-interval", "100ms", "--banking-webhook-backoff", "3s",
		"--banking-webhook-pause", "0")
	// The test reads the outbox's state straight from PostgreSQL, not
	// through the proxy.
	direct, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	outbox := func(id string) (state string, attempts int) {
		_ = direct.R.QueryRow(`SELECT state, attempts FROM banking_payment_webhooks WHERE external_id = $1`, id).Scan(&state, &attempts)
		return state, attempts
	}
	var out bytes.Buffer
	if err := runBanking(context.Background(), []string{"token", "--scope", "PAY_DOC_RU", "--data-dir", ts.dataDir, "--database-url", u.String()},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %s", err, out.String())
	}
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	sole := []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}
	create := func(id string, signed bool) string {
		t.Helper()
		doc := map[string]any{
			"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": json.Number("10.01"), "operationCode": "01", "priority": "5",
			"purpose": "Оплата, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN,
			"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeAccount": "40602810700000000025",
			"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		}
		if signed {
			doc["digestSignatures"] = sole
		}
		st, m := bankRequestJSON(t, "POST", base, "Bearer "+tok.AccessToken, doc)
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %v", id, st, m)
		}
		s, _ := m["bankStatus"].(string)
		return s
	}
	const (
		answered = "d0000000-0000-4000-8000-000000000001" // delivered before the outage
		pending  = "d0000000-0000-4000-8000-000000000002" // refused before it, due during it
		signed   = "d0000000-0000-4000-8000-000000000003" // signed once the database is back
	)
	if st := create(answered, true); st != banking.StatusImplemented {
		t.Fatalf("signed create: %s", st)
	}
	eventually(t, 20*time.Second, "the first webhook delivered and recorded", func() bool {
		st, _ := outbox(answered)
		return st == "DELIVERED"
	})
	recv.setRefuse(pending, true)
	create(pending, true)
	eventually(t, 20*time.Second, "the second webhook refused and recorded", func() bool {
		st, n := outbox(pending)
		return st == "PENDING" && n == 1
	})
	var retryDue int64 // µs since the epoch, as the outbox keeps it
	if err := direct.R.QueryRow(`SELECT next_at FROM banking_payment_webhooks WHERE external_id = $1`, pending).Scan(&retryDue); err != nil {
		t.Fatal(err)
	}
	if st := create(signed, false); st != banking.StatusCreated {
		t.Fatalf("unsigned create: %s", st)
	}

	proxy.down()
	recv.setRefuse(pending, false)
	st, m := bankRequestJSON(t, "POST", base+"/"+signed+"/sign", "Bearer "+tok.AccessToken, map[string]any{"digestSignatures": sole})
	if st != http.StatusServiceUnavailable || m["cause"] != "UNAVAILABLE_RESOURCE_EXCEPTION" {
		t.Fatalf("sign during the outage: %d %v", st, m)
	}
	eventually(t, 10*time.Second, "the dispatcher's WARN line", func() bool {
		return strings.Contains(ts.logs.String(), "banking-webhooks: database unavailable")
	})
	// The retry of the refused event falls due during the outage (3 s
	// after its attempt), and the dispatcher, ticking every 100 ms, fails
	// pass after pass meanwhile. The test waits for the due time and then
	// for failed passes after it, as many as a slow machine takes to run
	// them, so the outage holds the due retry however the passes are
	// scheduled.
	time.Sleep(time.Until(time.UnixMicro(retryDue)))
	failed := func() float64 {
		return metricValue(t, ts, `partnerapi_background_errors_total{reason="database_unavailable",worker="banking-webhooks"}`)
	}
	atDue := failed()
	eventually(t, 30*time.Second, "failed passes of the dispatcher counted after the retry fell due in the outage", func() bool {
		v := failed()
		return v > atDue && v >= 5
	})

	proxy.up()
	upAt := time.Now()
	st, m = bankRequestJSON(t, "POST", base+"/"+signed+"/sign", "Bearer "+tok.AccessToken, map[string]any{"digestSignatures": sole})
	if st != http.StatusOK || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("sign after the outage: %d %v", st, m)
	}
	eventually(t, 20*time.Second, "both webhooks delivered after the outage", func() bool {
		a, _ := recv.counts(pending)
		b, _ := recv.counts(signed)
		return a > 0 && b > 0
	})
	eventually(t, 10*time.Second, "the dispatcher's INFO line", func() bool {
		return strings.Contains(ts.logs.String(), "banking-webhooks: works again")
	})
	// Ten more ticks: nothing is sent a second time.
	time.Sleep(time.Second)
	for _, tc := range []struct {
		id               string
		accepted, refuse int
	}{{answered, 1, 0}, {pending, 1, 1}, {signed, 1, 0}} {
		if a, r := recv.counts(tc.id); a != tc.accepted || r != tc.refuse {
			t.Errorf("%s: accepted %d and refused %d times, want %d and %d", tc.id, a, r, tc.accepted, tc.refuse)
		}
		if st, _ := outbox(tc.id); st != "DELIVERED" {
			t.Errorf("%s: outbox state %s", tc.id, st)
		}
	}

	logs := ts.logs.String()
	var lines []string
	for l := range strings.Lines(logs) {
		if strings.Contains(l, "worker=banking-webhooks") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[1], "level=INFO") {
		t.Errorf("the dispatcher's lines: %q, want one WARN and one INFO:\n%s", lines, logs)
	}
	if strings.Contains(logs, storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs)
	}
	last := metricValue(t, ts, `partnerapi_background_last_success_timestamp_seconds{worker="banking-webhooks"}`)
	if last < float64(upAt.Unix()) {
		t.Errorf("last success %v, want after the outage (%d)", last, upAt.Unix())
	}
}

// The webhook outbox while SQLite stays locked past its 10 s busy timeout
// (another process holding the write lock: a provisioning command, a
// backup): the dispatcher's passes fail with SQLITE_BUSY, which is one WARN
// line saying the database is unavailable and one INFO line once the lock
// is gone, and the webhook that was due meanwhile is delivered once after.
func TestServeBankingWebhooksWhileSQLiteBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out SQLite's 10 s busy timeout")
	}
	recv, recvURL := newWebhookReceiver(t)
	ts := startServer(t, "--only", "banking", "--banking-webhook-url", recvURL, "--banking-webhook-allow-private",
		"--banking-webhook-interval", "100ms", "--banking-webhook-backoff", "2s", "--banking-webhook-pause", "0")
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	const id = "d1000000-0000-4000-8000-000000000001"
	recv.setRefuse(id, true)
	st, m := bankRequestJSON(t, "POST", ts.urls["banking"]+"/fintech/api/v1/payments", "Bearer "+tok, map[string]any{
		"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": json.Number("10.01"), "operationCode": "01", "priority": "5",
		"purpose": "Оплата, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN,
		"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
		"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeAccount": "40602810700000000025",
		"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		"digestSignatures": []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}},
	})
	if st != http.StatusCreated || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("create: %d %v", st, m)
	}
	eventually(t, 10*time.Second, "the refused delivery", func() bool { _, r := recv.counts(id); return r == 1 })
	recv.setRefuse(id, false)

	// Another connection takes the write lock and keeps it past the
	// server's busy timeout.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(ts.dataDir, "partnerapi.db")+"?_pragma=busy_timeout%2810000%29")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the dispatcher's WARN line", func() bool {
		return strings.Contains(ts.logs.String(), "banking-webhooks: database unavailable")
	})
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the webhook delivered after the lock", func() bool { a, _ := recv.counts(id); return a > 0 })
	eventually(t, 10*time.Second, "the dispatcher's INFO line", func() bool {
		return strings.Contains(ts.logs.String(), "banking-webhooks: works again")
	})
	time.Sleep(time.Second)
	if a, r := recv.counts(id); a != 1 || r != 1 {
		t.Errorf("accepted %d and refused %d times, want once each", a, r)
	}
	var lines []string
	for l := range strings.Lines(ts.logs.String()) {
		if strings.Contains(l, "worker=banking-webhooks") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "database is locked") ||
		!strings.Contains(lines[1], "level=INFO") {
		t.Errorf("the dispatcher's lines: %q, want a WARN naming the lock and an INFO:\n%s", lines, ts.logs.String())
	}
	if v := metricValue(t, ts, `partnerapi_background_errors_total{reason="database_unavailable",worker="banking-webhooks"}`); v < 1 {
		t.Errorf("failed passes counted: %v", v)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// pgProxy forwards TCP connections to a PostgreSQL server and can stop
// doing so, which to its clients is the server stopping: connections in
// use are cut and new ones refused, while the real server keeps running
// for the other tests.
type pgProxy struct {
	t      *testing.T
	addr   string // the proxy's own address, kept across down and up
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	p := &pgProxy{t: t, target: target, conns: map[net.Conn]struct{}{}}
	p.listen("127.0.0.1:0")
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.down)
	return p
}

func (p *pgProxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *pgProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
}

// down closes the listener and every forwarded connection.
func (p *pgProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// up listens again on the same address: the server is back.
func (p *pgProxy) up() { p.listen(p.addr) }

// newID is the externalId of the outage test's i-th payment.
func newID(i int) string { return fmt.Sprintf("b0000000-0000-4000-8000-%012d", i) }

// The measured outage, through serve on PostgreSQL: while the database
// cannot be reached (sessions cut, connections refused) a payment create is
// 503 UNAVAILABLE_RESOURCE_EXCEPTION with a Retry-After and an ERROR line
// saying the database is unavailable with the answer's referenceId; the
// URL's password is in no log line; once the database is back the server
// creates payments again without a restart.
func TestServeBankingDuringPostgresOutage(t *testing.T) {
	dbURL, _ := scratchPostgres(t, "outage")
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	u.Host = proxy.addr
	u.User = url.UserPassword(u.User.Username(), storetest.DeadPassword)
	ts := startServer(t, "--only", "banking", "--database-url", u.String())
	token := func() string {
		t.Helper()
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := runBanking(ctx, []string{"token", "--scope", "PAY_DOC_RU", "--data-dir", ts.dataDir, "--database-url", u.String()},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
			t.Fatal(err)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(out.Bytes(), &tok); err != nil || tok.AccessToken == "" {
			t.Fatalf("token: %v %s", err, out.String())
		}
		return tok.AccessToken
	}
	// The second token is first used during the outage, so no cache has
	// it: the server must ask the database, and that it cannot is a 503,
	// not a 401.
	used, unused := token(), token()
	create := func(tok, id string) (*http.Response, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{
			"externalId": id, "date": todayUTC(), "amount": json.Number("10.01"), "operationCode": "01", "priority": "5",
			"purpose": "Оплата, без НДС", "payerName": "ООО Песочница", "payerInn": banking.SandboxOrgINN,
			"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО Лютик", "payeeInn": "7830002293", "payeeAccount": "40602810700000000025",
			"payeeBankBic": "049805746", "payeeBankCorrAccount": "30101810800000000746",
		})
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/payments", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp, m
	}
	if resp, m := create(used, newID(0)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("before the outage: %d %v", resp.StatusCode, m)
	}

	proxy.down()
	// The pool's idle sessions were cut (unexpected EOF on each); once they
	// are spent, new ones are refused. Both are the outage.
	// expectUnavailable returns the ERROR line the 503 logged.
	expectUnavailable := func(what, tok, id string) string {
		t.Helper()
		resp, m := create(tok, id)
		if resp.StatusCode != http.StatusServiceUnavailable || m["cause"] != "UNAVAILABLE_RESOURCE_EXCEPTION" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: %d %v Retry-After %q, want 503 UNAVAILABLE_RESOURCE_EXCEPTION with a Retry-After",
				what, resp.StatusCode, m, resp.Header.Get("Retry-After"))
		}
		ref, _ := m["referenceId"].(string)
		for l := range strings.Lines(ts.logs.String()) {
			if ref != "" && strings.Contains(l, "referenceId="+ref) && strings.Contains(l, "level=ERROR") &&
				strings.Contains(l, "banking: database unavailable") {
				return l
			}
		}
		t.Fatalf("%s: no ERROR line about the database with referenceId %q:\n%s", what, ref, ts.logs.String())
		return ""
	}
	for i := 1; !strings.Contains(ts.logs.String(), "connect: connection refused"); i++ {
		if i > 40 {
			t.Fatalf("40 creates during the outage and no connection was refused:\n%s", ts.logs.String())
		}
		expectUnavailable("create during the outage", used, newID(i))
	}
	// The token check meets either a refused connection or one more of the
	// pool's cut idle sessions (unexpected EOF): how many the pool held
	// depends on how many queries the creates before it ran at once.
	if l := expectUnavailable("token check during the outage", unused, newID(50)); !strings.Contains(l, `err="authenticate: `) {
		t.Errorf("the token check did not fail on the database: %s\n%s", l, ts.logs.String())
	}
	if strings.Contains(ts.logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", ts.logs.String())
	}

	proxy.up()
	for i, tok := range []string{used, unused} {
		if resp, m := create(tok, newID(60+i)); resp.StatusCode != http.StatusCreated {
			t.Errorf("after the database came back: %d %v", resp.StatusCode, m)
		}
	}
}

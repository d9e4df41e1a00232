package chatapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"partnerapi/internal/testenv"
	"strings"
	"sync/atomic"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// outageStore is the real store whose database goes down on demand: then
// every call the tests make fails with the error of a real connect to a
// closed port, token lookups too unless tokensUp.
type outageStore struct {
	assistant.Store
	down, tokensUp atomic.Bool
	err            error
}

func (s *outageStore) fail() bool { return s.down.Load() }

func (s *outageStore) Token(ctx context.Context, hash string) (assistant.Token, error) {
	if s.fail() && !s.tokensUp.Load() {
		return assistant.Token{}, s.err
	}
	return s.Store.Token(ctx, hash)
}

func (s *outageStore) Client(ctx context.Context, id string) (assistant.Client, error) {
	if s.fail() {
		return assistant.Client{}, s.err
	}
	return s.Store.Client(ctx, id)
}

func (s *outageStore) Balances(ctx context.Context, clientID string) ([]assistant.Balance, error) {
	if s.fail() {
		return nil, s.err
	}
	return s.Store.Balances(ctx, clientID)
}

// While the database is unavailable the API answers 503 "Service
// Unavailable" with a Retry-After, in the token endpoint's envelope there,
// not 500: a token that cannot be checked is 503, not 401, and so is a
// request whose token was checked but whose data cannot be read. Each is an
// ERROR line saying the database is unavailable, without the URL's
// password; once the database is back the same requests succeed.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	store := &outageStore{Store: assistantsql.New(db), err: storetest.UnavailableError(t)}
	svc := assistant.NewService(store, toolEngine{}, assistant.Config{})
	var logs testenv.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	api := web.API{Name: "assistant", Handler: WithSessionID(NewServer(Deps{Log: log, Service: svc})), Errors: ErrorWriter()}
	srv := httptest.NewServer(api.Build(log, nil))
	t.Cleanup(srv.Close)

	cr, err := svc.CreateClient(ctx, assistant.ScopePers, []assistant.Balance{{Model: "plain", Tokens: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := svc.IssueToken(ctx, "Basic "+cr.AuthorizationKey, rqUID, string(assistant.ScopePers), "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, auth, contentType, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("RqUID", rqUID)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp, m
	}
	chat := `{"model":"plain:1","messages":[{"role":"user","content":"hi"}]}`
	oauth := url.Values{"scope": {string(assistant.ScopePers)}}.Encode()
	type request struct {
		name, method, path, auth, contentType, body string
		codeField                                   string // the envelope's status field
	}
	requests := []request{
		{"models", "GET", "/api/v1/models", "Bearer " + tok, "", "", "status"},
		{"chat", "POST", "/api/v1/chat/completions", "Bearer " + tok, "application/json", chat, "status"},
		{"oauth", "POST", oauthPath, "Basic " + cr.AuthorizationKey, "application/x-www-form-urlencoded", oauth, "code"},
	}
	expectUnavailable := func(rs []request) {
		t.Helper()
		for _, r := range rs {
			resp, m := call(r.method, r.path, r.auth, r.contentType, r.body)
			if resp.StatusCode != http.StatusServiceUnavailable || m[r.codeField] != float64(503) || m["message"] != "Service Unavailable" {
				t.Errorf("%s: %d %v, want 503 Service Unavailable", r.name, resp.StatusCode, m)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: no Retry-After", r.name)
			}
		}
	}
	store.down.Store(true)
	expectUnavailable(requests)
	store.tokensUp.Store(true)
	expectUnavailable([]request{{"balance", "GET", "/api/v1/balance", "Bearer " + tok, "", "", "status"}})

	lines := strings.Count(logs.String(), "level=ERROR msg=\"assistant: database unavailable\"")
	if lines != len(requests)+1 || !strings.Contains(logs.String(), "request_id=") {
		t.Errorf("%d ERROR lines about the database with request ids, want %d:\n%s", lines, len(requests)+1, logs.String())
	}
	if strings.Contains(logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs.String())
	}

	store.down.Store(false)
	for _, r := range append(requests, request{"balance", "GET", "/api/v1/balance", "Bearer " + tok, "", "", ""}) {
		if resp, m := call(r.method, r.path, r.auth, r.contentType, r.body); resp.StatusCode != http.StatusOK {
			t.Errorf("%s after the database came back: %d %v", r.name, resp.StatusCode, m)
		}
	}
}

// cutEngine fails every generation as an upstream whose stream broke off
// does: with a bare unexpected EOF, the words of a database session cut
// mid-request too.
type cutEngine struct{ toolEngine }

func (cutEngine) Generate(context.Context, assistant.GenerateRequest, func(assistant.Delta) error) (assistant.Result, error) {
	return assistant.Result{}, fmt.Errorf("upstream: stream: %w", io.ErrUnexpectedEOF)
}

// An engine's broken connection is not a database outage: the chat is the
// internal error it was, not a 503 that blames the database.
func TestEngineCutIsNotDatabaseOutage(t *testing.T) {
	f := newFixtureWith(t, cutEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), string(assistant.ScopeCorp))
	resp, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain:1","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("chat on a cut engine: %d %s, want 500", resp.StatusCode, body)
	}
}

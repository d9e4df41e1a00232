package chatapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

var update = flag.Bool("update", false, "rewrite golden files")

const rqUID = "72384bd5-0ca0-4cfd-9ac7-65d75258284c"

type fixture struct {
	t   *testing.T
	url string
	svc *assistant.Service
	mu  sync.Mutex
	off time.Duration
	// closeStore closes the service's database, so that tests can make
	// every store call fail.
	closeStore func() error
}

// sharedEngine is opened once: loading a model per test would dominate.
var (
	engineOnce sync.Once
	engine     *local.Engine
	engineErr  error
)

// openEngine serves only stories260K, through a symlink (never a copy).
func openEngine(t *testing.T) (*local.Engine, error) {
	src := testenv.Model(t, "stories260K.gguf")
	dir, err := os.MkdirTemp("", "assistant-models")
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(src, filepath.Join(dir, "stories260K.gguf")); err != nil {
		return nil, err
	}
	// A 256-token window keeps the clamped-max_tokens case short (it runs
	// to the end of the window) and so fast and deterministic under -race.
	// The golden streams were written over the half-precision KV cache:
	// the default cache type depends on the CPU (int8 where it has
	// AVX-512), and a 253-token greedy story diverges between the two
	// after a few tokens, so the goldens pin f16 to stay the same on every
	// machine.
	return local.Open(dir, local.Options{MaxContext: 256, KVCache: model.KVF16})
}

// newFixture starts the API over a fresh store. fresh gives it its own
// engine, so KV-cache reuse by earlier tests (precached_prompt_tokens)
// cannot change golden output.
func newFixture(t *testing.T, fresh ...bool) *fixture {
	t.Helper()
	// Skip before the shared engine's sync.Once: a skip inside it would
	// mark the engine opened, nil, and fail every later test instead of
	// skipping it.
	testenv.Model(t, "stories260K.gguf")
	var eng *local.Engine
	if len(fresh) > 0 && fresh[0] {
		var err error
		if eng, err = openEngine(t); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = eng.Close() })
	} else {
		engineOnce.Do(func() { engine, engineErr = openEngine(t) })
		if engineErr != nil {
			t.Fatal(engineErr)
		}
		eng = engine
	}
	return newFixtureWith(t, eng)
}

// newFixtureWith starts the API over eng; each of opts may change the
// platform's settings (a shorter write deadline) before it is built.
func newFixtureWith(t *testing.T, eng assistant.Engine, opts ...func(*web.API)) *fixture {
	t.Helper()
	return newFixtureOn(t, eng, web.Platform{}, opts...)
}

// newFixtureOn is newFixtureWith on a platform of p's settings (its
// trusted proxies); the fixture sets its log and metrics.
func newFixtureOn(t *testing.T, eng assistant.Engine, p web.Platform, opts ...func(*web.API)) *fixture {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, closeStore: db.Close}
	f.svc = assistant.NewService(assistantsql.New(db), eng, assistant.Config{
		Limits: map[assistant.Scope]int{assistant.ScopePers: 1, assistant.ScopeB2B: 10, assistant.ScopeCorp: 10},
		Now: func() time.Time {
			f.mu.Lock()
			defer f.mu.Unlock()
			return time.Now().Add(f.off)
		},
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := web.NewMetrics("test")
	mux := NewServer(Deps{Metrics: metrics, Log: log, Service: f.svc})
	api := web.API{Name: "assistant", Handler: WithSessionID(mux), Errors: ErrorWriter(), Health: db.Ping}
	for _, o := range opts {
		o(&api)
	}
	p.Log, p.Metrics = log, metrics
	h := api.BuildOn(p)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	f.off += d
	f.mu.Unlock()
}

func (f *fixture) client(scope assistant.Scope, balances ...assistant.Balance) assistant.Credentials {
	f.t.Helper()
	c, err := f.svc.CreateClient(context.Background(), scope, balances)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// token gets an access token through the HTTP endpoint.
func (f *fixture) token(c assistant.Credentials, scope string) string {
	f.t.Helper()
	resp, body := f.oauth("Basic "+c.AuthorizationKey, rqUID, url.Values{"scope": {scope}})
	if resp.StatusCode != 200 {
		f.t.Fatalf("oauth: %d %s", resp.StatusCode, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresAt   int64  `json:"expires_at"`
	}
	if err := json.Unmarshal(body, &tok); err != nil {
		f.t.Fatal(err)
	}
	return tok.AccessToken
}

func (f *fixture) oauth(auth, rq string, form url.Values) (*http.Response, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.url+"/api/v2/oauth", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if rq != "" {
		req.Header.Set("RqUID", rq)
	}
	return f.do(req)
}

func (f *fixture) do(req *http.Request) (*http.Response, []byte) {
	f.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("X-Session-Id") == "" {
		f.t.Errorf("%s %s: missing X-Request-Id/X-Session-Id", req.Method, req.URL.Path)
	}
	return resp, body
}

func (f *fixture) call(method, path, token, body string) (*http.Response, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return f.do(req)
}

func TestOAuthErrors(t *testing.T) {
	f := newFixture(t)
	c := f.client(assistant.ScopeCorp)
	basic := "Basic " + c.AuthorizationKey
	wrong := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.ClientID+":nope"))
	tests := []struct {
		name, auth, rq, scope string
		status                int
		want                  string
	}{
		{"no scope", basic, rqUID, "", 400, `{"code":5,"message":"scope is empty"}`},
		{"bad scope", basic, rqUID, "NOPE", 400, `{"code":1,"message":"scope data format invalid"}`},
		{"not entitled", basic, rqUID, "ASSISTANT_API_PERS", 400, `{"code":7,"message":"scope from db not fully includes consumed scope"}`},
		{"no RqUID", basic, "", "ASSISTANT_API_CORP", 400, `{"code":2,"message":"RqUID header is missing or is not a UUID"}`},
		{"bad RqUID", basic, "123", "ASSISTANT_API_CORP", 400, `{"code":2,"message":"RqUID header is missing or is not a UUID"}`},
		{"no auth", "", rqUID, "ASSISTANT_API_CORP", 401, `{"code":4,"message":"Can't decode 'Authorization' header"}`},
		{"garbled auth", "Basic !!!", rqUID, "ASSISTANT_API_CORP", 401, `{"code":4,"message":"Can't decode 'Authorization' header"}`},
		// Only SP and HTAB are trimmed around the key (RFC 9110 §5.6.3).
		{"key and NBSP", basic + "\u00a0", rqUID, "ASSISTANT_API_CORP", 401, `{"code":4,"message":"Can't decode 'Authorization' header"}`},
		{"key and ideographic space", basic + "\u3000", rqUID, "ASSISTANT_API_CORP", 401, `{"code":4,"message":"Can't decode 'Authorization' header"}`},
		{"wrong secret", wrong, rqUID, "ASSISTANT_API_CORP", 401, `{"code":6,"message":"credentials doesn't match db data"}`},
		{"unknown client", "Basic " + base64.StdEncoding.EncodeToString([]byte("x:y")), rqUID, "ASSISTANT_API_CORP", 401, `{"code":6,"message":"credentials doesn't match db data"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{}
			if tt.scope != "" {
				form.Set("scope", tt.scope)
			}
			resp, body := f.oauth(tt.auth, tt.rq, form)
			if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	// A scope sent more than once names no one scope: it is garbled
	// (code 1), whichever values it repeats, rather than the first of
	// them read as the scope asked for (RFC 6749 §3.1: a parameter is
	// sent once at most).
	for _, scopes := range [][]string{
		{"ASSISTANT_API_CORP", "ASSISTANT_API_CORP"},
		{"ASSISTANT_API_CORP", "ASSISTANT_API_PERS"},
		{"GIGACHAT_API_CORP", "NOPE"},
		{"", ""},
		{"ASSISTANT_API_CORP", ""},
		{"", " ASSISTANT_API_CORP"},
	} {
		t.Run("scope "+strings.Join(scopes, " and "), func(t *testing.T) {
			resp, body := f.oauth(basic, rqUID, url.Values{"scope": scopes})
			if want := `{"code":1,"message":"scope data format invalid"}`; resp.StatusCode != 400 || strings.TrimSpace(string(body)) != want {
				t.Fatalf("got %d %s, want 400 %s", resp.StatusCode, body, want)
			}
		})
	}
	t.Run("token rate", func(t *testing.T) {
		c := f.client(assistant.ScopeB2B)
		var last int
		var body []byte
		for range 11 {
			var resp *http.Response
			resp, body = f.oauth("Basic "+c.AuthorizationKey, rqUID, url.Values{"scope": {"ASSISTANT_API_B2B"}})
			last = resp.StatusCode
		}
		if last != 429 || strings.TrimSpace(string(body)) != `{"code":8,"message":"Too Many Requests"}` {
			t.Fatalf("11th token in a second: %d %s", last, body)
		}
	})
	t.Run("success with alias", func(t *testing.T) {
		resp, body := f.oauth(basic, rqUID, url.Values{"scope": {"GIGACHAT_API_CORP"}})
		var tok struct {
			AccessToken string `json:"access_token"`
			ExpiresAt   int64  `json:"expires_at"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		if d := time.Until(time.UnixMilli(tok.ExpiresAt)); d < 29*time.Minute || d > 31*time.Minute {
			t.Fatalf("expires_at %d is %v away, want 30m", tok.ExpiresAt, d)
		}
		if resp.Header.Get("Cache-Control") == "" || resp.Header.Get("Pragma") != "no-cache" {
			t.Fatalf("missing no-store headers: %v", resp.Header)
		}
	})
}

func TestAPIErrors(t *testing.T) {
	f := newFixture(t)
	corp := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	broke := f.token(f.client(assistant.ScopeB2B, assistant.Balance{Model: "stories260K", Tokens: 0}), "ASSISTANT_API_B2B")
	long := strings.Repeat("Once upon a time there was a little girl. ", 400)
	chat := func(extra string) string {
		return `{"model":"stories260K","messages":[{"role":"user","content":"Hi"}]` + extra + `}`
	}
	tests := []struct {
		name, method, path, token, body string
		status                          int
		want                            string
	}{
		{"no bearer", "GET", "/api/v1/models", "", "", 401, `{"status":401,"message":"Unauthorized"}`},
		{"bad bearer", "GET", "/api/v1/models", "nope", "", 401, `{"status":401,"message":"Unauthorized"}`},
		{"unknown model", "GET", "/api/v1/models/GigaChat", corp, "", 404, `{"status":404,"message":"No such model"}`},
		{"wrong version", "GET", "/api/v1/models/stories260K:9.9", corp, "", 404, `{"status":404,"message":"No such model"}`},
		{"chat unknown model", "POST", "/api/v1/chat/completions", corp, `{"model":"GigaChat","messages":[{"role":"user","content":"Hi"}]}`, 404, `{"status":404,"message":"No such model"}`},
		{"bad json", "POST", "/api/v1/chat/completions", corp, `{"model":`, 400, ""},
		{"no messages", "POST", "/api/v1/chat/completions", corp, `{"model":"stories260K","messages":[]}`, 400, `{"status":400,"message":"messages must not be empty"}`},
		{"system not first", "POST", "/api/v1/chat/completions", corp, `{"model":"stories260K","messages":[{"role":"user","content":"a"},{"role":"system","content":"s"}]}`, 422, `{"status":422,"message":"Invalid params: system message must be the first message"}`},
		{"repetition penalty", "POST", "/api/v1/chat/completions", corp, chat(`,"repetition_penalty":0`), 422, `{"status":422,"message":"Invalid params: repetition_penalty must be in range (0, +inf)"}`},
		{"n too big", "POST", "/api/v1/chat/completions", corp, chat(`,"n":5`), 422, `{"status":422,"message":"Invalid params: n must be in range [1, 4]"}`},
		{"functions", "POST", "/api/v1/chat/completions", corp, chat(`,"functions":[{"name":"f","parameters":{"type":"object"}}]`), 422, `{"status":422,"message":"Requested model does not support functions"}`},
		{"context window", "POST", "/api/v1/chat/completions", corp, `{"model":"stories260K","messages":[{"role":"user","content":"` + long + `"}]}`, 413, `{"status":413,"message":"Payload too large"}`},
		{"context window stream", "POST", "/api/v1/chat/completions", corp, `{"model":"stories260K","stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, 413, `{"status":413,"message":"Payload too large"}`},
		{"payment required", "POST", "/api/v1/chat/completions", broke, chat(""), 402, `{"status":402,"message":"Payment Required"}`},
		{"payment required stream", "POST", "/api/v1/chat/completions", broke, chat(`,"stream":true`), 402, `{"status":402,"message":"Payment Required"}`},
		{"balance postpaid", "GET", "/api/v1/balance", corp, "", 403, `{"status":403,"message":"Permission denied"}`},
		{"tokens without input", "POST", "/api/v1/tokens/count", corp, `{"model":"stories260K"}`, 400, `{"status":400,"message":"input is required"}`},
		{"tokens input null", "POST", "/api/v1/tokens/count", corp, `{"model":"stories260K","input":null}`, 400, `{"status":400,"message":"input is required"}`},
		{"tokens unknown model", "POST", "/api/v1/tokens/count", corp, `{"model":"x","input":["a"]}`, 404, `{"status":404,"message":"No such model"}`},
		{"unknown route", "GET", "/api/v1/nope", corp, "", 404, `{"status":404,"message":"Not Found"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call(tt.method, tt.path, tt.token, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
			}
			if tt.want != "" && strings.TrimSpace(string(body)) != tt.want {
				t.Fatalf("body %s, want %s", body, tt.want)
			}
		})
	}
	t.Run("expired token", func(t *testing.T) {
		f.advance(31 * time.Minute)
		defer f.advance(-31 * time.Minute)
		resp, body := f.call("GET", "/api/v1/models", corp, "")
		if resp.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"status":401,"message":"Token has expired"}` {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
	t.Run("too many requests", func(t *testing.T) {
		c := f.client(assistant.ScopePers, assistant.Balance{Model: "stories260K", Tokens: 1000})
		tok := f.token(c, "GIGACHAT_API_PERS")
		release, err := f.svc.Acquire(context.Background(), assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopePers})
		if err != nil {
			t.Fatal(err)
		}
		resp, body := f.call("POST", "/api/v1/chat/completions", tok, chat(`,"max_tokens":2`))
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || strings.TrimSpace(string(body)) != `{"status":429,"message":"Too Many Requests"}` {
			t.Fatalf("got %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
		release()
		if resp, body := f.call("POST", "/api/v1/chat/completions", tok, chat(`,"max_tokens":2`)); resp.StatusCode != 200 {
			t.Fatalf("after release: %d %s", resp.StatusCode, body)
		}
	})
}

var (
	createdRE = regexp.MustCompile(`"created":\d+`)
	usageRE   = regexp.MustCompile(`"prompt_tokens":(\d+),"completion_tokens":(\d+),"total_tokens":(\d+),"precached_prompt_tokens":(\d+)`)
)

// wholePrompt rewrites a usage object as if no prompt token had been
// reused from the cache: prompt_tokens and total_tokens leave the reused
// ones out (reference §3.3), and how many the engine reuses is its own
// policy, not the wire format.
func wholePrompt(b []byte) []byte {
	return usageRE.ReplaceAllFunc(b, func(m []byte) []byte {
		var n [4]int
		for i, s := range usageRE.FindSubmatch(m)[1:] {
			n[i], _ = strconv.Atoi(string(s))
		}
		return fmt.Appendf(nil, `"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"precached_prompt_tokens":0`, n[0]+n[3], n[1], n[2]+n[3])
	})
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = createdRE.ReplaceAll(got, []byte(`"created":0`))
	// How much of a prompt the engine's KV cache reuses is its own policy,
	// not the wire format: normalised like the clock.
	got = wholePrompt(got)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\n got: %s\nwant: %s", name, got, want)
	}
}

func TestChatGolden(t *testing.T) {
	f := newFixture(t, true)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	tests := []struct{ name, body string }{
		{"chat.json", `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":16,"profanity_check":false}`},
		{"stream.sse", `{"model":"stories260K:latest","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":16,"stream":true}`},
		{"stream_n2.sse", `{"model":"stories260K:1.0","messages":[{"role":"user","content":"Lily saw a cat"}],"temperature":0,"max_tokens":6,"n":2,"stream":true}`},
		{"stream_clamped.sse", `{"model":"stories260K","messages":[{"role":"user","content":"Hi"}],"temperature":0,"top_p":1,"max_tokens":999999999,"repetition_penalty":1,"stream":true,"update_interval":100}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if strings.HasSuffix(tt.name, ".sse") {
				if resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
				}
				checkSSE(t, body)
			}
			golden(t, tt.name, body)
		})
	}
}

// checkSSE asserts the rules of reference §3.4 that a golden file alone
// would not explain.
func checkSSE(t *testing.T, body []byte) {
	t.Helper()
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	roles := map[int]int{}
	for i, ev := range events[:len(events)-1] {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %d lacks 'data: ': %q", i, ev)
		}
		var e struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
					Role    string  `json:"role"`
				} `json:"delta"`
				Index        int    `json:"index"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Object string          `json:"object"`
			Model  string          `json:"model"`
			Usage  json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(payload), &e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		last := i == len(events)-2
		if e.Object != "chat.completion" || e.Model != "stories260K:1.0" {
			t.Fatalf("event %d: object %q model %q", i, e.Object, e.Model)
		}
		if (e.Usage != nil) != last {
			t.Fatalf("event %d: usage present=%v, want only in the last", i, e.Usage != nil)
		}
		for _, c := range e.Choices {
			if c.Delta.Role != "" {
				roles[c.Index]++
			}
			if (c.FinishReason != "") != last {
				t.Fatalf("event %d: finish_reason %q", i, c.FinishReason)
			}
			if last && (c.Delta.Content == nil || *c.Delta.Content != "") {
				t.Fatalf("last event delta content must be empty")
			}
		}
	}
	for i, n := range roles {
		if n != 1 {
			t.Fatalf("choice %d has role in %d deltas", i, n)
		}
	}
}

func TestTokensBalanceUsage(t *testing.T) {
	f := newFixture(t)
	b2b := f.client(assistant.ScopeB2B, assistant.Balance{Model: "stories260K", Tokens: 10000})
	tok := f.token(b2b, "ASSISTANT_API_B2B")
	resp, body := f.call("POST", "/api/v1/tokens/count", tok, `{"model":"stories260K","input":["Once upon a time","é"]}`)
	var counts []struct {
		Object     string `json:"object"`
		Tokens     int    `json:"tokens"`
		Characters int    `json:"characters"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &counts) != nil || len(counts) != 2 || counts[0].Object != "tokens" ||
		counts[0].Tokens < 1 || counts[0].Characters != 16 || counts[1].Characters != 1 {
		t.Fatalf("tokens/count: %d %s", resp.StatusCode, body)
	}

	resp, body = f.call("POST", "/api/v1/chat/completions", tok, `{"model":"stories260K","messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":8}`)
	var comp struct {
		Usage struct {
			Prompt int64 `json:"prompt_tokens"`
			Comp   int64 `json:"completion_tokens"`
			Total  int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &comp) != nil || comp.Usage.Comp == 0 || comp.Usage.Total != comp.Usage.Prompt+comp.Usage.Comp {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	resp, body = f.call("GET", "/api/v1/balance", tok, "")
	// total_tokens is what is billed (reference §3.3).
	want := 10000 - comp.Usage.Total
	var bal struct {
		Balance []struct {
			Usage string `json:"usage"`
			Value int64  `json:"value"`
		} `json:"balance"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &bal) != nil || len(bal.Balance) != 1 || bal.Balance[0].Usage != "stories260K" || bal.Balance[0].Value != want {
		t.Fatalf("balance: %d %s, want value %d", resp.StatusCode, body, want)
	}

	corp := f.client(assistant.ScopeCorp)
	ctok := f.token(corp, "ASSISTANT_API_CORP")
	if resp, body := f.call("POST", "/api/v1/chat/completions", ctok, `{"model":"stories260K","messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"stream":true}`); resp.StatusCode != 200 {
		t.Fatalf("corp chat: %d %s", resp.StatusCode, body)
	}
	us, err := f.svc.Usage(context.Background(), corp.ClientID)
	if err != nil || len(us) != 1 || us[0].Tokens <= 0 {
		t.Fatalf("postpaid usage %+v %v", us, err)
	}

	resp, body = f.call("GET", "/api/v1/models", tok, "")
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"object":"list","data":[{"id":"stories260K:1.0","object":"model","owned_by":"partnerapi","type":"chat"}]}` {
		t.Fatalf("models: %d %s", resp.StatusCode, body)
	}
}

func FuzzDecodeChatRequest(f *testing.F) {
	f.Add(`{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"Hi"}],"temperature":0.5,"max_tokens":100,"model":"GigaChat","profanity_check":false}`)
	f.Add(`{"model":"GigaChat","messages":[{"role":"user","content":"Hi"}],"max_tokens":999999999999}`)
	f.Add(`{"model":"x","messages":[{"role":"assistant","content":"","function_call":{"name":"f","arguments":{"a":1}}}],"functions":[{"name":"f"}]}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		req, _, err := decodeChatRequest(strings.NewReader(s))
		if err != nil {
			return
		}
		if req.MaxTokens != nil && *req.MaxTokens > 1<<30 {
			t.Fatalf("max_tokens not clamped: %d", *req.MaxTokens)
		}
		for _, m := range req.Messages {
			if m.Role == "" {
				t.Fatal("message without role accepted")
			}
		}
	})
}

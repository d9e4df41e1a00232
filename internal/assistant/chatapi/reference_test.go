package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// This file asserts facts of the reference (assistant.md) that no other
// test of the transport pins: the headers of §1 and §2, the parameter
// ranges of §3.2, the tolerance rules of §6 and the model id styles of
// §3.1 and §8 #2.

// newConfiguredFixture is newFixtureWith for a service with its own
// configuration (the model id style), which the shared fixture fixes.
func newConfiguredFixture(t *testing.T, eng assistant.Engine, cfg assistant.Config) *fixture {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, closeStore: db.Close}
	f.svc = assistant.NewService(assistantsql.New(db), eng, cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := web.NewMetrics("test")
	api := web.API{Name: "assistant", Handler: WithSessionID(NewServer(Deps{Metrics: metrics, Log: log, Service: f.svc})), Errors: ErrorWriter(), Health: db.Ping}
	srv := httptest.NewServer(api.Build(log, metrics))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// TestRequestIDsEchoed: every answer, an error too, carries the client's
// X-Request-ID and X-Session-ID back, as sent (reference §2), and makes
// its own when the client sends none (checked by fixture.do on every
// call of these tests).
func TestRequestIDsEchoed(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	for _, tc := range []struct {
		name, method, path, token string
		status                    int
	}{
		{"answer", "GET", "/api/v1/models", tok, 200},
		{"refused token", "GET", "/api/v1/models", "nope", 401},
		{"unknown model", "GET", "/api/v1/models/nope", tok, 404},
		{"unknown route", "GET", "/api/v1/nope", tok, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.url+tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			req.Header.Set("X-Request-ID", "7a0c1f5e-req")
			req.Header.Set("X-Session-ID", "conversation-42")
			req.Header.Set("X-Client-ID", "client-9")
			resp, body := f.do(req)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if got := resp.Header.Get("X-Request-Id"); got != "7a0c1f5e-req" {
				t.Errorf("X-Request-Id %q, want the client's", got)
			}
			if got := resp.Header.Get("X-Session-Id"); got != "conversation-42" {
				t.Errorf("X-Session-Id %q, want the client's", got)
			}
		})
	}
	t.Run("token endpoint", func(t *testing.T) {
		req, _ := http.NewRequest("POST", f.url+"/api/v2/oauth", strings.NewReader("scope=ASSISTANT_API_CORP"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("RqUID", rqUID)
		req.Header.Set("X-Session-ID", "conversation-42")
		resp, body := f.do(req)
		if resp.StatusCode != 401 || resp.Header.Get("X-Session-Id") != "conversation-42" {
			t.Fatalf("%d %s, X-Session-Id %q", resp.StatusCode, body, resp.Header.Get("X-Session-Id"))
		}
	})
}

// TestTokenCacheHeaders: the token's answer forbids caching exactly as the
// provider's does (reference §1, recorded traffic).
func TestTokenCacheHeaders(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	c := f.client(assistant.ScopeCorp)
	resp, body := f.oauth("Basic "+c.AuthorizationKey, rqUID, url.Values{"scope": {"ASSISTANT_API_CORP"}})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for h, want := range map[string]string{
		"Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
		"Pragma":        "no-cache",
		"Expires":       "0",
		"Content-Type":  "application/json; charset=utf-8",
	} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
}

// TestStreamHeaders: a stream is text/event-stream, not cached and not
// buffered by an nginx in front (reference §3.4 rules 1, 4 and 12), and
// an answer without streaming is compact JSON in UTF-8 (§2).
func TestStreamHeaders(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	body := func(stream bool) string {
		return `{"model":"qwen","messages":[{"role":"user","content":"x"}],"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `}`
	}
	resp, b := f.call("POST", "/api/v1/chat/completions", tok, body(true))
	for _, h := range []struct{ name, want string }{
		{"Content-Type", "text/event-stream"},
		{"Cache-Control", "no-cache"},
		// An nginx in front passes each event on as written (rule 4).
		{"X-Accel-Buffering", "no"},
	} {
		if resp.StatusCode != 200 || resp.Header.Get(h.name) != h.want {
			t.Fatalf("stream: %d %s %q, want %q: %s", resp.StatusCode, h.name, resp.Header.Get(h.name), h.want, b)
		}
	}
	resp, b = f.call("POST", "/api/v1/chat/completions", tok, body(false))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || strings.Contains(strings.TrimSpace(string(b)), "\n") {
		t.Fatalf("JSON: %d Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

// TestChatParams: the parameter ranges of reference §3.2 and the roles of
// its messages, each refused before the engine runs, and what real
// clients send besides (§6), accepted.
func TestChatParams(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	chat := func(extra string) string {
		return `{"model":"plain","messages":[{"role":"user","content":"x"}]` + extra + `}`
	}
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"temperature over 2", chat(`,"temperature":2.01`), 422, `{"status":422,"message":"Invalid params: temperature must be in range [0, 2]"}`},
		{"temperature negative", chat(`,"temperature":-0.1`), 422, `{"status":422,"message":"Invalid params: temperature must be in range [0, 2]"}`},
		{"top_p over 1", chat(`,"top_p":1.5`), 422, `{"status":422,"message":"Invalid params: top_p must be in range [0, 1]"}`},
		{"n 0", chat(`,"n":0`), 422, `{"status":422,"message":"Invalid params: n must be in range [1, 4]"}`},
		{"max_tokens 0", chat(`,"max_tokens":0`), 422, `{"status":422,"message":"Invalid params: max_tokens must be positive"}`},
		{"repetition_penalty negative", chat(`,"repetition_penalty":-1`), 422, `{"status":422,"message":"Invalid params: repetition_penalty must be in range (0, +inf)"}`},
		{"update_interval negative", chat(`,"update_interval":-1`), 422, `{"status":422,"message":"Invalid params: update_interval must not be negative"}`},
		{"two system messages", `{"model":"plain","messages":[{"role":"system","content":"a"},{"role":"system","content":"b"},{"role":"user","content":"x"}]}`, 422, `{"status":422,"message":"Invalid params: system message must be the first message"}`},
		{"unknown role", `{"model":"plain","messages":[{"role":"robot","content":"x"}]}`, 422, `{"status":422,"message":"Invalid params: unknown message role robot"}`},
		{"no role", `{"model":"plain","messages":[{"content":"x"}]}`, 400, `{"status":400,"message":"messages[0].role is required"}`},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, 400, `{"status":400,"message":"model is required"}`},
		{"not JSON", `{"model":`, 400, ""},
		// The bounds themselves are in range.
		{"bounds", chat(`,"temperature":2,"top_p":0,"n":4,"max_tokens":1,"repetition_penalty":0.01,"update_interval":0`), 200, ""},
		// temperature 0 with top_p 1 is what some clients send (§3.2, §8 #4).
		{"temperature and top_p together", chat(`,"temperature":0,"top_p":1`), 200, ""},
		{"huge max_tokens", chat(`,"max_tokens":999999999999`), 200, ""},
		// However huge: the contract's integer has no maximum.
		{"max_tokens beyond int64", chat(`,"max_tokens":99999999999999999999`), 200, ""},
		{"max_tokens 1e30", chat(`,"max_tokens":1e30`), 200, ""},
		{"n beyond int64", chat(`,"n":99999999999999999999`), 422, `{"status":422,"message":"Invalid params: n must be in range [1, 4]"}`},
		// Every extra the reference lists (§6), the provider's roles (§3.2)
		// and a per-message id: accepted and ignored.
		{"extras", `{"model":"plain","messages":[{"role":"system","content":"s","id":"m1"},{"role":"search_result","content":"found"},{"role":"function_in_progress","content":"..."},{"role":"user","content":"x","id":"m2","attachments":[]}],` +
			`"profanity_check":true,"flags":["no_cache"],"update_interval":0,"storage":{"limit":1},"function_ranker":{"enabled":true,"top_n":3},` +
			`"response_format":{"type":"json_schema","schema":{"type":"object"},"strict":true},"reasoning_effort":"low","additional_fields":["x"],"unknown_field":{"a":[1]}}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, tt.body)
			if resp.StatusCode != tt.status || (tt.want != "" && strings.TrimSpace(string(body)) != tt.want) {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
}

// TestModelIDStyles: ids are the spec's NAME:version by default and the
// provider's bare names when configured (reference §3.1, §8 #2), a
// completion names NAME:version either way (the provider's recorded
// answers do), and requests take every form under both styles.
func TestModelIDStyles(t *testing.T) {
	for _, tc := range []struct {
		bare bool
		id   string
	}{{false, "qwen:2.5"}, {true, "qwen"}} {
		f := newConfiguredFixture(t, toolEngine{}, assistant.Config{BareIDs: tc.bare})
		tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
		resp, body := f.call("GET", "/api/v1/models", tok, "")
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list.Data) == 0 || list.Data[0].ID != tc.id {
			t.Fatalf("bare %v: models %d %s, want first id %q", tc.bare, resp.StatusCode, body, tc.id)
		}
		for _, asked := range []string{"qwen", "qwen:latest", "qwen:2.5"} {
			resp, body := f.call("GET", "/api/v1/models/"+asked, tok, "")
			if want := `{"id":"` + tc.id + `","object":"model","owned_by":"test","type":"chat"}`; resp.StatusCode != 200 || strings.TrimSpace(string(body)) != want {
				t.Fatalf("bare %v: model %s: %d %s, want %s", tc.bare, asked, resp.StatusCode, body, want)
			}
			resp, body = f.call("POST", "/api/v1/chat/completions", tok, `{"model":"`+asked+`","messages":[{"role":"user","content":"x"}]}`)
			var comp struct {
				Model string `json:"model"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(body, &comp) != nil || comp.Model != "qwen:2.5" {
				t.Fatalf("bare %v: chat with %s: %d %s, want model qwen:2.5", tc.bare, asked, resp.StatusCode, body)
			}
		}
	}
}

// cachedEngine answers as an engine that reused 30 of a prompt's 40
// tokens from its cache.
type cachedEngine struct{ toolEngine }

func (cachedEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if emit != nil {
		if err := emit(assistant.Delta{Text: "Hello."}); err != nil {
			return assistant.Result{}, err
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: "Hello.", FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 40, CompletionTokens: 20, PrecachedPromptTokens: 30}}, nil
}

// TestUsageLeavesOutCachedTokens: total_tokens is what the client is
// billed, the cached prompt tokens subtracted, and still prompt_tokens +
// completion_tokens, so prompt_tokens counts the uncached ones alone
// (reference §3.3: the provider's recorded answers and its docs). The
// balance falls by total_tokens, in an answer and in a stream alike.
func TestUsageLeavesOutCachedTokens(t *testing.T) {
	f := newFixtureWith(t, cachedEngine{})
	tok := f.token(f.client(assistant.ScopeB2B, assistant.Balance{Model: "plain", Tokens: 1000}), "ASSISTANT_API_B2B")
	const want = `"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30,"precached_prompt_tokens":30}`
	balance := 1000
	for _, stream := range []string{"false", "true"} {
		resp, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain","messages":[{"role":"user","content":"x"}],"stream":`+stream+`}`)
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("stream %s: %d %s, want %s", stream, resp.StatusCode, body, want)
		}
		balance -= 30
		resp, body = f.call("GET", "/api/v1/balance", tok, "")
		if got := `{"balance":[{"usage":"plain","value":` + strconv.Itoa(balance) + `}]}`; resp.StatusCode != 200 || strings.TrimSpace(string(body)) != got {
			t.Fatalf("stream %s: balance %d %s, want %s", stream, resp.StatusCode, body, got)
		}
	}
}

// fullEngine finds every prompt over its context window.
type fullEngine struct{ toolEngine }

func (fullEngine) Generate(context.Context, assistant.GenerateRequest, func(assistant.Delta) error) (assistant.Result, error) {
	return assistant.Result{}, assistant.ErrContextWindow
}

// TestContextWindowStatuses: a prompt over the model's context window is
// 413 Payload too large, but the spec's 422 "Unprocessable Entity for url:
// <...>/chat/completions" when attached files put it over (reference §4).
func TestContextWindowStatuses(t *testing.T) {
	f := newFixtureWith(t, fullEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	id := uploadText(t, f, tok, "notes.txt", "Lily had a red ball.")
	for _, tc := range []struct {
		name, attachments string
		status            int
		message           string
	}{
		{"prompt", "", 413, "Payload too large"},
		{"attached files", `,"attachments":["` + id + `"]`, 422, "Unprocessable Entity for url: " + f.url + "/api/v1/chat/completions"},
	} {
		for _, stream := range []string{"false", "true"} {
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain","stream":`+stream+`,"messages":[{"role":"user","content":"x"`+tc.attachments+`}]}`)
			var e errorBody
			if resp.StatusCode != tc.status || json.Unmarshal(body, &e) != nil || e.Status != tc.status || e.Message != tc.message {
				t.Errorf("%s, stream %s: %d %s, want %d %q", tc.name, stream, resp.StatusCode, body, tc.status, tc.message)
			}
		}
	}
}

// uploadText uploads a text file through the API and returns its id.
func uploadText(t *testing.T, f *fixture, tok, name, content string) string {
	t.Helper()
	return uploadFile(t, f, tok, name, "text/plain", []byte(content))
}

// uploadFile uploads content as a file of that name and media type through
// the API (no purpose: the server's default) and returns its id.
func uploadFile(t *testing.T, f *fixture, tok, name, mediaType string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", mediaType)
	part, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	mw.Close()
	req, _ := http.NewRequest("POST", f.url+"/api/v1/files", &buf)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, body := f.do(req)
	var file struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &file) != nil || file.ID == "" {
		t.Fatalf("upload: %d %.300s", resp.StatusCode, body)
	}
	return file.ID
}

// TestCreatedInSeconds: created is Unix seconds (reference §3.3), in an
// answer and in every event of a stream, not milliseconds as expires_at.
func TestCreatedInSeconds(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	for _, stream := range []string{"false", "true"} {
		before := time.Now().Unix()
		_, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"plain","stream":`+stream+`,"messages":[{"role":"user","content":"x"}]}`)
		after := time.Now().Unix()
		n := 0
		for _, m := range createdRE.FindAll(body, -1) {
			n++
			if c, _ := strconv.ParseInt(strings.TrimPrefix(string(m), `"created":`), 10, 64); c < before || c > after {
				t.Errorf("stream %s: created %d, want Unix seconds in [%d, %d]", stream, c, before, after)
			}
		}
		if n == 0 {
			t.Errorf("stream %s: no created in %s", stream, body)
		}
	}
}

// TestBusyClientHearsRefusalFirst: a request the API refuses for what it
// asks is refused so whether or not the client's concurrent-request slots
// are taken; only one that would run hears 429 (reference §4).
func TestBusyClientHearsRefusalFirst(t *testing.T) {
	f := newFixture(t)
	c := f.client(assistant.ScopePers, assistant.Balance{Model: "stories260K", Tokens: 1000})
	tok := f.token(c, "ASSISTANT_API_PERS")
	release, err := f.svc.Acquire(context.Background(), assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopePers})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"ai check without input", "/api/v1/ai/check", `{"model":"stories260K"}`, 400},
		{"ai check unknown model", "/api/v1/ai/check", `{"model":"nope","input":"Once upon a time"}`, 404},
		{"ai check", "/api/v1/ai/check", `{"model":"stories260K","input":"Once upon a time"}`, 429},
		{"chat bad params", "/api/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"x"}],"n":9}`, 422},
		{"chat", "/api/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"x"}],"max_tokens":1}`, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if resp, body := f.call("POST", tt.path, tok, tt.body); resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
		})
	}
}

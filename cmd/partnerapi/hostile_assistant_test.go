package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"partnerapi/internal/assistant"
)

// assistantHostile is the assistant API under the sweep: a B2B client with
// balances (the sweep's credentials), a CORP client (postpaid: /balance is
// its 403), a second client whose file the sweep must not reach, and a
// client of its own for each token endpoint, whose rate limit is per client.
type assistantHostile struct {
	base    string
	bearer  map[string]string // client → "Bearer <token>"
	keys    map[string]string // client → authorization key
	other   string            // the second client's file id
	counter atomic.Int64
}

const assistantOtherMarker = "secret of the second client 5c1e"

func newAssistantHostile(t *testing.T) *hostileTarget {
	models := chatAndEmbedderModels(t)
	data := t.TempDir()
	a := &assistantHostile{bearer: map[string]string{}, keys: map[string]string{}}
	var expiredClient string
	for name, args := range map[string][]string{
		"b2b":     {"--scope", "ASSISTANT_API_B2B", "--balance", "stories260K=100000000", "--balance", "tinyembed=100000000"},
		"corp":    {"--scope", "ASSISTANT_API_CORP"},
		"other":   {"--scope", "ASSISTANT_API_CORP"},
		"token":   {"--scope", "ASSISTANT_API_B2B"},
		"legacy":  {"--scope", "ASSISTANT_API_B2B"},
		"pers":    {"--scope", "ASSISTANT_API_PERS"},
		"expired": {"--scope", "ASSISTANT_API_CORP"},
	} {
		creds, err := createAssistantClient(t, data, args...)
		if err != nil {
			t.Fatal(err)
		}
		a.keys[name] = creds["authorization_key"]
		if name == "expired" {
			expiredClient = creds["client_id"]
		}
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", models, "--only", "assistant")
	a.base = ts.urls["assistant"]
	for name, scope := range map[string]string{"b2b": "ASSISTANT_API_B2B", "corp": "ASSISTANT_API_CORP", "other": "ASSISTANT_API_CORP", "expired": "ASSISTANT_API_CORP"} {
		a.bearer[name] = "Bearer " + assistantToken(t, a.base, scope, a.keys[name])
	}
	// The token is aged in the store, as if its 30 minutes had passed.
	execStore(t, data, `UPDATE assistant_tokens SET expires_at = 1 WHERE hash = $1`,
		assistant.HashSecret(strings.TrimPrefix(a.bearer["expired"], "Bearer ")))
	a.other = a.upload(t, a.bearer["other"], "other.txt", assistantOtherMarker)
	wrongSecret := base64.StdEncoding.EncodeToString([]byte(expiredClient + ":not-the-secret"))
	return &hostileTarget{
		name: "assistant", base: a.base, contract: loadAssistantContract(t).contractSpec, maxBody: 1 << 20,
		good: a.good, foreign: a.foreign, envelope: assistantEnvelope,
		badCreds: func(op hostileOp) map[string]string {
			if op.path == "/api/v2/oauth" || op.path == "/api/v1/token" {
				return map[string]string{"not Base64": "Basic %%%", "no colon": "Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")),
					"wrong secret": "Basic " + wrongSecret, "bearer": a.bearer["b2b"]}
			}
			return map[string]string{"garbage": "Bearer not-a-token", "empty": "Bearer ", "basic": "Basic " + a.keys["b2b"],
				"expired": a.bearer["expired"]}
		},
		unscoped: func(op hostileOp) (string, int) {
			switch op.path {
			case "/api/v1/balance":
				// Reference §4: /balance is 403 for a postpaid client.
				return a.bearer["corp"], http.StatusForbidden
			case "/api/v2/oauth":
				// Reference §1: a key not entitled to the scope asked
				// for is 400 (code 7).
				return "Basic " + a.keys["pers"], http.StatusBadRequest
			}
			return "", 0
		},
		badIDs: []string{"not-a-file", "..%2F..%2Fetc%2Fpasswd", "%27%20OR%201%3D1--", strings.Repeat("f", 300)},
	}
}

// upload stores a text file as the client of auth and returns its id.
func (a *assistantHostile) upload(t *testing.T, auth, name, content string) string {
	t.Helper()
	body, ctype := multipartBody(t, name, "text/plain", []byte(content), map[string]string{"purpose": "general"})
	tg := &hostileTarget{base: a.base}
	status, raw := tg.send(t, "POST", hostileReq{path: "/api/v1/files", auth: auth, body: body, ctype: ctype})
	var f struct{ ID string }
	if status != http.StatusOK || json.Unmarshal(raw, &f) != nil || f.ID == "" {
		t.Fatalf("upload: %d %s", status, raw)
	}
	return f.ID
}

// get answers GET path as the client of auth.
func (a *assistantHostile) get(t *testing.T, path, auth string) (int, []byte) {
	tg := &hostileTarget{base: a.base}
	return tg.send(t, "GET", hostileReq{path: path, auth: auth})
}

// spent reports whether the b2b client's balance of model fell below
// what it was when spent was called: a refused request bills nothing.
func (a *assistantHostile) spent(t *testing.T, model string) func(t *testing.T) bool {
	before := a.balance(t, model)
	return func(t *testing.T) bool { return a.balance(t, model) < before }
}

func (a *assistantHostile) balance(t *testing.T, model string) int64 {
	t.Helper()
	status, raw := a.get(t, "/api/v1/balance", a.bearer["b2b"])
	var b struct {
		Balance []struct {
			Usage string
			Value int64
		}
	}
	if status != http.StatusOK || json.Unmarshal(raw, &b) != nil {
		t.Fatalf("balance: %d %s", status, raw)
	}
	for _, it := range b.Balance {
		if it.Usage == model {
			return it.Value
		}
	}
	t.Fatalf("no balance of %s: %s", model, raw)
	return 0
}

// gone reports whether a file is no longer its client's.
func (a *assistantHostile) gone(id, auth string) func(t *testing.T) bool {
	return func(t *testing.T) bool {
		status, _ := a.get(t, "/api/v1/files/"+id, auth)
		return status == http.StatusNotFound
	}
}

func (a *assistantHostile) good(t *testing.T, op hostileOp) (hostileReq, bool) {
	r := hostileReq{path: op.path, auth: a.bearer["b2b"], ctype: "application/json"}
	switch op.key() {
	case "POST /api/v2/oauth":
		r.auth, r.ctype, r.body = "Basic "+a.keys["token"], "application/x-www-form-urlencoded", "scope=ASSISTANT_API_B2B"
		r.header = map[string]string{"RqUID": "72384bd5-0ca0-4cfd-9ac7-65d75258284c"}
	case "POST /api/v1/token":
		// The legacy password flow: Basic client_id:client_secret, no
		// body. Its client is its own, for the rate limit's sake.
		r.auth, r.ctype = "Basic "+a.keys["legacy"], ""
	case "GET /api/v1/models", "GET /api/v1/balance", "GET /api/v1/files":
	case "GET /api/v1/models/{model}":
		r.path = "/api/v1/models/stories260K"
	case "POST /api/v1/chat/completions":
		r.body = `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":2}`
		r.written = a.spent(t, "stories260K")
	case "POST /api/v1/tokens/count":
		r.body = `{"model":"stories260K","input":["Once upon a time"]}`
	case "POST /api/v1/embeddings":
		r.body = `{"model":"tinyembed","input":["Once upon a time"]}`
		r.written = a.spent(t, "tinyembed")
	case "POST /api/v1/functions/validate":
		r.body = `{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`
		// Finding what is wrong with a function is the operation's job:
		// members of the wrong types are findings in a 200 (the contract).
		r.tolerated = []string{"wrong member types"}
	case "POST /api/v1/files":
		name := fmt.Sprintf("hostile-%d.txt", a.counter.Add(1))
		r.body, r.ctype = multipartBody(t, name, "text/plain", []byte("hello"), map[string]string{"purpose": "general"})
		r.written = func(t *testing.T) bool {
			_, raw := a.get(t, "/api/v1/files", a.bearer["b2b"])
			return strings.Contains(string(raw), name)
		}
	case "GET /api/v1/files/{file}", "GET /api/v1/files/{file}/content":
		r.path = strings.Replace(op.path, "{file}", a.upload(t, a.bearer["b2b"], "mine.txt", "mine"), 1)
	case "POST /api/v1/files/{file}/delete":
		id := a.upload(t, a.bearer["b2b"], "doomed.txt", "doomed")
		r.path, r.body = "/api/v1/files/"+id+"/delete", "{}"
		r.written = a.gone(id, a.bearer["b2b"])
		// The body is optional (the contract), so none is no fault.
		r.tolerated = []string{"empty body"}
	case "POST /api/v1/ai/check":
		r.body = `{"input":"Once upon a time there was a little girl","model":"stories260K"}`
		r.written = a.spent(t, "stories260K")
	default:
		return hostileReq{}, false
	}
	return r, true
}

// foreign names the second client's file; models belong to no client.
func (a *assistantHostile) foreign(t *testing.T, op hostileOp) (hostileReq, bool) {
	if !strings.Contains(op.path, "{file}") {
		return hostileReq{}, false
	}
	r, _ := a.good(t, op)
	r.path = withPathParams(op, r.path, a.other)
	r.leaks = []string{assistantOtherMarker, "other.txt"}
	if strings.HasSuffix(op.path, "/delete") {
		r.written = a.gone(a.other, a.bearer["other"])
	}
	return r, true
}

// assistantEnvelope holds an error answer to the assistant's envelopes:
// {code, message} on the token endpoint (reference §1), {status, message}
// with status the HTTP status everywhere else (§4).
func assistantEnvelope(t *testing.T, path string, status int, raw []byte) {
	t.Helper()
	if path == "/api/v2/oauth" {
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if err := strictJSON(raw, &e); err != nil || e.Code == nil || e.Message == nil || *e.Message == "" {
			t.Errorf("not the token endpoint's {code, message} (%v): %.300s", err, raw)
		}
		return
	}
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if err := strictJSON(raw, &e); err != nil || e.Status != status || e.Message == "" {
		t.Errorf("not the assistant's {status, message} for %d (%v): %.300s", status, err, raw)
	}
	if status == http.StatusUnauthorized && e.Message != "Unauthorized" && e.Message != "Token has expired" {
		t.Errorf("401 message %q, want Unauthorized or Token has expired (reference §2)", e.Message)
	}
}

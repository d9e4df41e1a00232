package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// contractFixture is a live server with stories260K as a chat model,
// toolstory (the same file, declared to support functions) and tinyembed
// (the same file again, declared an embedder with a 32-token window), and
// the Authorization values the table names.
type contractFixture struct {
	base string
	// brokenBase is a second server whose store lost its balance, usage
	// and client tables once its client's token was issued
	// (renameTables): a generation it cannot bill answers 500, and so
	// does the token endpoint, which cannot look the client up.
	brokenBase string
	// lostBase is a third server whose token table is gone once its
	// client's token ("lost corp") was issued: no bearer token can be
	// looked up, so every /api/v1 operation answers 500.
	lostBase string
	// downBase is a server on PostgreSQL whose database is taken down once
	// its client, token and file (downFile) are made
	// (startOutageAssistant); "" without PostgreSQL.
	downBase, downFile string
	auth               map[string]string
}

func newContractFixture(t *testing.T) *contractFixture {
	t.Helper()
	src := testenv.Model(t, "stories260K.gguf")
	models := t.TempDir()
	for _, name := range []string{"stories260K", "tinyembed", "toolstory"} {
		if err := os.Symlink(src, filepath.Join(models, name+".gguf")); err != nil {
			t.Fatal(err)
		}
	}
	for name, manifest := range map[string]string{"tinyembed": `{"type":"embedder","context_window":32}`, "toolstory": `{"supports_functions":true}`} {
		if err := os.WriteFile(filepath.Join(models, name+".json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	keys := map[string]string{}
	for name, args := range map[string][]string{
		"corp": {"--scope", "ASSISTANT_API_CORP"},
		// PERS has one concurrent request, which the 429 cases fill.
		"pers": {"--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=1000000", "--balance", "tinyembed=1000000"},
		// A prepaid client whose balances are spent gets 402.
		"broke": {"--scope", "ASSISTANT_API_B2B", "--balance", "stories260K=0", "--balance", "tinyembed=0"},
		// The token rate limit is per client; a client of its own keeps
		// the burst from refusing the other cases' tokens.
		"rate":        {"--scope", "ASSISTANT_API_B2B"},
		"legacy rate": {"--scope", "ASSISTANT_API_B2B"},
	} {
		creds, err := createAssistantClient(t, data, args...)
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = creds["authorization_key"]
		if name == "corp" {
			id := creds["client_id"]
			keys["wrong"] = base64.StdEncoding.EncodeToString([]byte(id + ":not-the-secret"))
		}
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", models, "--only", "assistant")
	f := &contractFixture{base: ts.urls["assistant"], auth: map[string]string{
		"bad":           "Bearer not-a-token",
		"basic garbled": "Basic %%%",
	}}
	for name, key := range keys {
		f.auth["basic "+name] = "Basic " + key
	}
	for name, scope := range map[string]string{"corp": "ASSISTANT_API_CORP", "pers": "ASSISTANT_API_PERS", "broke": "ASSISTANT_API_B2B"} {
		f.auth[name] = "Bearer " + assistantToken(t, f.base, scope, keys[name])
	}
	broken := t.TempDir()
	creds, err := createAssistantClient(t, broken, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	f.brokenBase = startServer(t, "--data-dir", broken, "--models-dir", models, "--only", "assistant").urls["assistant"]
	f.auth["broken corp"] = "Bearer " + assistantToken(t, f.brokenBase, "ASSISTANT_API_CORP", creds["authorization_key"])
	f.auth["basic broken"] = "Basic " + creds["authorization_key"]
	renameTables(t, broken, "assistant_balances", "assistant_usage", "assistant_clients")
	lost := t.TempDir()
	creds, err = createAssistantClient(t, lost, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	f.lostBase = startServer(t, "--data-dir", lost, "--models-dir", models, "--only", "assistant").urls["assistant"]
	f.auth["lost corp"] = "Bearer " + assistantToken(t, f.lostBase, "ASSISTANT_API_CORP", creds["authorization_key"])
	f.auth["basic lost"] = "Basic " + creds["authorization_key"]
	renameTables(t, lost, "assistant_tokens")
	f.startOutageAssistant(t, models)
	return f
}

// request builds the case's request; it is built twice, once for the
// server and once for the validator, which reads the body.
func (f *contractFixture) request(ctx context.Context, tc contractCase) *http.Request {
	body, ctype := tc.body, "application/json"
	if tc.form != "" || tc.path == "/api/v2/oauth" {
		body, ctype = tc.form, "application/x-www-form-urlencoded"
	}
	if tc.ctype != "" {
		ctype = tc.ctype
	}
	base := f.base
	if tc.broken {
		base = f.brokenBase
	}
	if tc.down {
		base = f.downBase
	}
	if tc.lost {
		base = f.lostBase
	}
	req, _ := http.NewRequestWithContext(ctx, tc.method, base+tc.path, strings.NewReader(body))
	// The legacy token endpoint takes no body, and its clients send no
	// Content-Type.
	if tc.method == "POST" && tc.path != "/api/v1/token" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if tc.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if tc.auth != "" {
		a, ok := f.auth[tc.auth]
		if !ok {
			panic("no Authorization value named " + tc.auth)
		}
		req.Header.Set("Authorization", a)
	}
	if tc.rqUID != "" {
		req.Header.Set("RqUID", tc.rqUID)
	}
	return req
}

// exchange sends one case and validates the request and the response
// against the contract, returning the status.
func (f *contractFixture) exchange(t *testing.T, c *assistantContract, tc contractCase) int {
	t.Helper()
	c.checkRequest(t, f.request(context.Background(), tc), tc.badRequest)
	resp, raw := sendRecorded(t, http.DefaultClient, f.request(context.Background(), tc))
	if ok, errs := c.responses.ValidateHttpResponse(f.request(context.Background(), tc), resp); !ok {
		t.Errorf("%d %.300s\nthe response breaks the contract:%s", resp.StatusCode, raw, describe(errs))
	}
	if tc.down {
		checkOutage(t, resp, raw)
	}
	// Reference §2: every response of the API, errors included, carries
	// both ids. /healthz, /metrics and /openapi.yaml are the platform's,
	// served before the API's handler, and no client logs their ids.
	for _, h := range []string{"X-Request-Id", "X-Session-Id"} {
		if strings.HasPrefix(tc.path, "/api/") && resp.Header.Get(h) == "" {
			t.Errorf("%d response without %s", resp.StatusCode, h)
		}
	}
	if resp.StatusCode == 200 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.checkStream(t, raw)
	} else if tc.stream {
		t.Errorf("a stream answered %d %s with Content-Type %q", resp.StatusCode, raw, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode
}

// check is exchange for a row of the table: the status must be the row's.
func (f *contractFixture) check(t *testing.T, c *assistantContract, tc contractCase) int {
	t.Helper()
	if tc.busy {
		// The client's only slot is held by a stream for the length of
		// the request; afterwards it is waited for, so later rows of the
		// same client are not refused.
		ctx, cancel := context.WithCancel(context.Background())
		token := strings.TrimPrefix(f.auth[tc.auth], "Bearer ")
		hold := holdStream(t, ctx, f.base, token, 1)
		defer f.waitFree(t, tc)
		defer hold.Body.Close()
		defer cancel()
	}
	got := f.exchange(t, c, tc)
	if got != tc.status {
		t.Errorf("status %d, want %d", got, tc.status)
	}
	checkVerdicts(t, got, tc.badRequest, tc.serverOnly)
	return got
}

// checkVerdicts holds the contract's verdict on a row's request, which
// checkRequest has found to be the row's badRequest, to the server's
// status: a request the server refuses as malformed (400) must be one the
// contract refuses too, unless serverOnly says why it cannot, and one the
// server answers with success must be one the contract takes. Before it,
// a row could say the server refused with 400 a request the contract took,
// and nothing failed. The smart home contract test holds its rows to it
// too.
func checkVerdicts(t *testing.T, status int, badRequest bool, serverOnly string) {
	t.Helper()
	switch {
	case status == http.StatusBadRequest && !badRequest && serverOnly == "":
		t.Errorf("the server refuses the request with 400, but the contract takes it: make the contract refuse it and mark the row badRequest, or name in serverOnly why the contract cannot")
	case status < 300 && badRequest:
		t.Errorf("the server takes the request (%d), but the contract refuses it", status)
	case serverOnly != "" && (badRequest || status != http.StatusBadRequest):
		t.Errorf("serverOnly explains a 400 the contract takes, but the server answered %d and the row is badRequest=%v", status, badRequest)
	}
}

// waitFree waits until the client of a busy row may start a request again.
func (f *contractFixture) waitFree(t *testing.T, tc contractCase) {
	t.Helper()
	probe := tc
	probe.body = `{"model":"stories260K","messages":[{"role":"user","content":"x"}],"max_tokens":1}`
	probe.path = "/api/v1/chat/completions"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.DefaultClient.Do(f.request(context.Background(), probe))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held stream's slot was never freed")
		}
	}
}

// checkStream validates every event of a finished stream: each data line
// but the last is a JSON chunk the contract's ChatCompletionChunk takes,
// and the last is [DONE] (reference §3.4).
func (c *assistantContract) checkStream(t *testing.T, body []byte) {
	t.Helper()
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	if len(events) < 2 || events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("not a finished stream: %.300s", body)
	}
	for i, ev := range events[:len(events)-1] {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Errorf("event %d is not `data: `: %q", i, ev)
			continue
		}
		if c.chunk == nil {
			continue
		}
		if ok, errs := c.schema.ValidateSchemaString(c.chunk, payload); !ok {
			t.Errorf("event %d %s breaks ChatCompletionChunk:%s", i, payload, describe(errs))
		}
	}
}

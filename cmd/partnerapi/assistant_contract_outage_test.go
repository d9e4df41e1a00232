package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// startOutageAssistant starts the fixture's down server on PostgreSQL
// behind a pgProxy with the fixture's models, makes a client, its token
// and a file while the proxy is up ("down basic", "down corp", downFile),
// then takes the proxy down: from then on every query of the server fails
// as on a stopped PostgreSQL. Without PostgreSQL the fixture has no down
// server.
func (f *contractFixture) startOutageAssistant(t *testing.T, models string) {
	t.Helper()
	dbURL, proxy, ok := outageDatabase(t, "assistantdown")
	if !ok {
		return
	}
	ts := startServer(t, "--database-url", dbURL, "--models-dir", models, "--only", "assistant")
	creds, err := createAssistantClient(t, ts.dataDir, "--scope", "ASSISTANT_API_CORP", "--database-url", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	f.downBase = ts.urls["assistant"]
	f.auth["down basic"] = "Basic " + creds["authorization_key"]
	f.auth["down corp"] = "Bearer " + assistantToken(t, f.downBase, "ASSISTANT_API_CORP", creds["authorization_key"])
	body, ctype := multipartBody(t, "story.md", "text/markdown", []byte("# Once\nupon a time"), map[string]string{"purpose": "general"})
	req, _ := http.NewRequest("POST", f.downBase+"/api/v1/files", strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", f.auth["down corp"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var file struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&file); err != nil || resp.StatusCode != 200 || file.ID == "" {
		t.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	f.downFile = file.ID
	proxy.down()
}

// outageCases has one row per operation of api/assistant.yaml that reads
// the store, sent to the down server: each is 503 with a Retry-After, the
// token endpoint's in its {code, message}; and /healthz, whose probe says
// unavailable.
func (f *contractFixture) outageCases(t *testing.T, chat func(model, extra string) string) []contractCase {
	rows := append([]contractCase{
		{name: "health", method: "GET", path: "/healthz"},
		{name: "token", method: "POST", path: "/api/v2/oauth", auth: "down basic", rqUID: "72384bd5-0ca0-4cfd-9ac7-65d75258284c", form: "scope=ASSISTANT_API_CORP"},
		{name: "legacy token", method: "POST", path: "/api/v1/token", auth: "down basic"},
	}, bearerRows(t, chat, f.downFile)...)
	for i := range rows {
		if rows[i].auth == "" && rows[i].path != "/healthz" {
			rows[i].auth = "down corp"
		}
		rows[i].name = "database down " + rows[i].name
		rows[i].down, rows[i].status = true, 503
	}
	return rows
}

// lostTokensCases has one row per bearer operation, sent with a token of
// the fixture's server whose token table is gone: the token cannot be
// looked up, so every operation answers 500 (Internal Server Error) before
// it reads its body, and the contract must document that 500; and the
// legacy token endpoint, which cannot store the token it issues.
func (f *contractFixture) lostTokensCases(t *testing.T, chat func(model, extra string) string) []contractCase {
	rows := bearerRows(t, chat, "c757a9c5-de04-498f-baa3-efcc54de7853")
	for i := range rows {
		rows[i].auth = "lost corp"
	}
	// The legacy token endpoint takes no bearer token, but it stores the
	// token it issues, which it cannot either.
	rows = append(rows, contractCase{name: "legacy token", method: "POST", path: "/api/v1/token", auth: "basic lost"})
	for i := range rows {
		rows[i].name = "token table lost " + rows[i].name
		rows[i].lost, rows[i].status = true, 500
	}
	return rows
}

// bearerRows has one request per operation of api/assistant.yaml under
// /api/v1 (every one takes a bearer token and reads the store), one that
// would succeed on a whole store, with file the id in the files paths;
// the callers fill in the server, the token and the expected answer.
func bearerRows(t *testing.T, chat func(model, extra string) string, file string) []contractCase {
	upload, uploadType := multipartBody(t, "a.txt", "text/plain", []byte("x"), map[string]string{"purpose": "general"})
	const files = "/api/v1/files"
	return []contractCase{
		{name: "models", method: "GET", path: "/api/v1/models"},
		{name: "model", method: "GET", path: "/api/v1/models/stories260K"},
		{name: "chat", method: "POST", path: "/api/v1/chat/completions", body: chat("stories260K", "")},
		{name: "chat stream", method: "POST", path: "/api/v1/chat/completions", body: chat("stories260K", `,"stream":true`)},
		{name: "tokens count", method: "POST", path: "/api/v1/tokens/count", body: `{"model":"stories260K","input":["x"]}`},
		{name: "balance", method: "GET", path: "/api/v1/balance"},
		{name: "embeddings", method: "POST", path: "/api/v1/embeddings", body: `{"model":"tinyembed","input":["x"]}`},
		{name: "validate function", method: "POST", path: "/api/v1/functions/validate", body: `{"name":"f","parameters":{"type":"object"}}`},
		{name: "file upload", method: "POST", path: files, ctype: uploadType, body: upload},
		{name: "files", method: "GET", path: files},
		{name: "file", method: "GET", path: files + "/" + file},
		{name: "file content", method: "GET", path: files + "/" + file + "/content"},
		{name: "file delete", method: "POST", path: files + "/" + file + "/delete", body: `{}`},
		{name: "ai check", method: "POST", path: "/api/v1/ai/check", body: aiCheck("stories260K", "Once upon a time")},
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// --assistant-file-quota-mb bounds what one client's files take: through
// the real server on SQLite, a second 700 KiB file does not fit into 1 MiB
// and gets the provider's 413 body naming the quota, another client still
// has its own room, a delete makes room again, and a negative quota ends
// serve.
func TestAssistantFileQuotaFlag(t *testing.T) {
	data := t.TempDir()
	var keys []string
	for range 2 {
		creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, creds["authorization_key"])
	}
	base := startServer(t, "--data-dir", data, "--models-dir", t.TempDir(), "--only", "assistant", "--assistant-file-quota-mb", "1").urls["assistant"]
	me, other := assistantToken(t, base, "ASSISTANT_API_CORP", keys[0]), assistantToken(t, base, "ASSISTANT_API_CORP", keys[1])
	call := func(tok, method, path, ctype string, body []byte) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %d %q", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode, out
	}
	upload := func(tok string) (int, map[string]any) {
		body, ctype := multipartBody(t, "notes.txt", "text/plain", bytes.Repeat([]byte("n"), 700<<10), map[string]string{"purpose": "general"})
		return call(tok, "POST", "/api/v1/files", ctype, []byte(body))
	}
	status, first := upload(me)
	if status != 200 {
		t.Fatalf("first upload: %d %v", status, first)
	}
	status, refused := upload(me)
	if msg, _ := refused["message"].(string); status != 413 || refused["status"] != float64(413) || !strings.Contains(msg, "quota of 1048576 bytes") {
		t.Fatalf("upload over the quota: %d %v", status, refused)
	}
	if status, list := call(me, "GET", "/api/v1/files", "", nil); status != 200 || len(list["data"].([]any)) != 1 {
		t.Fatalf("after the refused upload: %d %v", status, list)
	}
	if status, res := upload(other); status != 200 {
		t.Fatalf("another client's upload: %d %v", status, res)
	}
	if status, res := call(me, "POST", "/api/v1/files/"+first["id"].(string)+"/delete", "application/json", []byte("{}")); status != 200 || res["deleted"] != true {
		t.Fatalf("delete: %d %v", status, res)
	}
	if status, res := upload(me); status != 200 {
		t.Fatalf("upload after the delete: %d %v", status, res)
	}
	if err := serve(t.Context(), []string{"--only", "assistant", "--data-dir", t.TempDir(), "--assistant-file-quota-mb", "-1"},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &strings.Builder{}, err: &strings.Builder{}}, nil); err == nil {
		t.Fatal("serve took a quota of -1 MiB")
	}
}

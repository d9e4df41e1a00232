package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// --assistant-max-body-mb sets the cap on request bodies (reference §5: the
// provider publishes no input size, so it is configurable): through the real
// server, a 1.5 MiB body is refused with the default 1 MiB cap and reaches
// the handler with --assistant-max-body-mb 2 (here /tokens/count, which
// answers without a model: 404 No such model); a negative or overflowing
// cap, given on the command line or as PARTNERAPI_ASSISTANT_MAX_BODY_MB,
// ends serve.
func TestAssistantMaxBodyFlag(t *testing.T) {
	body := `{"model":"none","input":["` + strings.Repeat("x", 3<<19) + `"]}`
	statusOf := func(extra ...string) int {
		t.Helper()
		data := t.TempDir()
		creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
		if err != nil {
			t.Fatal(err)
		}
		base := startServer(t, append([]string{"--data-dir", data, "--models-dir", t.TempDir(), "--only", "assistant"}, extra...)...).urls["assistant"]
		tok := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
		req, _ := http.NewRequest("POST", base+"/api/v1/tokens/count", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		t.Logf("%v: %d %s", extra, resp.StatusCode, raw)
		return resp.StatusCode
	}
	if got := statusOf(); got != 413 {
		t.Errorf("a 1.5 MiB body with the default cap: %d, want 413", got)
	}
	if got := statusOf("--assistant-max-body-mb", "2"); got != 404 {
		t.Errorf("a 1.5 MiB body with a 2 MiB cap: %d, want 404 (it reached the handler)", got)
	}
	noEnv := func(string) string { return "" }
	for _, bad := range []struct {
		args   []string
		getenv func(string) string
	}{
		{[]string{"--assistant-max-body-mb", "-1"}, noEnv},
		{[]string{"--assistant-max-body-mb", "9223372036854775807"}, noEnv},
		// The environment form reaches the flag as every flag's does.
		{nil, func(name string) string {
			if name == "PARTNERAPI_ASSISTANT_MAX_BODY_MB" {
				return "-1"
			}
			return ""
		}},
	} {
		args := append([]string{"--only", "assistant", "--data-dir", t.TempDir(), "--models-dir", t.TempDir()}, bad.args...)
		var logs strings.Builder
		err := serve(t.Context(), args, bad.getenv, stdio{in: strings.NewReader(""), out: &strings.Builder{}, err: &logs}, nil)
		if err == nil || !strings.Contains(err.Error()+logs.String(), "--assistant-max-body-mb") {
			t.Errorf("serve with %v (env %q): %v, want a refusal naming --assistant-max-body-mb", bad.args, bad.getenv("PARTNERAPI_ASSISTANT_MAX_BODY_MB"), err)
		}
	}
}

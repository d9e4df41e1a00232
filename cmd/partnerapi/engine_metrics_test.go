package main

import (
	"context"
	"regexp"
	"strconv"
	"testing"
)

// TestEngineMetrics serves stories260K, runs one chat completion and reads
// the engine's scheduler state from /metrics: the tokens it decoded and
// prefilled, a batch that is empty again, and the finished prompt's KV
// memory kept by the prefix cache rather than by the batch.
func TestEngineMetrics(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=10000")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_PERS", creds["authorization_key"])}
	resp, raw := c.do(context.Background(), "POST", "/api/v1/chat/completions",
		`{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":6}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, raw)
	}
	resp, body := get(t, base+"/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("metrics: %d", resp.StatusCode)
	}
	value := func(series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("metrics lack %s", series)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatalf("%s: %v", series, err)
		}
		return v
	}
	const model = `{model="stories260K"}`
	if v := value("partnerapi_engine_decoded_tokens_total" + model); v < 6 {
		t.Errorf("decoded tokens %v, want at least the 6 asked for", v)
	}
	if v := value("partnerapi_engine_prefill_tokens_total" + model); v < 4 {
		t.Errorf("prefill tokens %v", v)
	}
	if v := value("partnerapi_engine_steps_total" + model); v < 5 {
		t.Errorf("steps %v", v)
	}
	if v := value(`partnerapi_engine_requests{model="stories260K",state="active"}`); v != 0 {
		t.Errorf("active requests %v after the answer", v)
	}
	if v := value(`partnerapi_engine_kv_bytes{model="stories260K",use="active"}`); v != 0 {
		t.Errorf("active KV bytes %v after the answer", v)
	}
	if v := value(`partnerapi_engine_kv_bytes{model="stories260K",use="cached"}`); v <= 0 {
		t.Errorf("cached KV bytes %v: the finished prompt should be in the prefix cache", v)
	}
	value(`partnerapi_engine_kv_bytes{model="stories260K",use="pooled"}`)
	// The one chat completion is one observation of the time to its first
	// token.
	for _, tc := range []struct {
		series   string
		min, max float64
	}{
		{`partnerapi_engine_time_to_first_token_seconds_count{model="stories260K"}`, 1, 1},
		{`partnerapi_engine_time_to_first_token_seconds_sum{model="stories260K"}`, 1e-9, 60},
		{`partnerapi_engine_time_to_first_token_seconds_bucket{model="stories260K",le="+Inf"}`, 1, 1},
		{`partnerapi_engine_time_to_first_token_seconds_bucket{model="stories260K",le="60"}`, 1, 1},
	} {
		if v := value(tc.series); v < tc.min || v > tc.max {
			t.Errorf("%s = %v, want %v..%v", tc.series, v, tc.min, tc.max)
		}
	}
}

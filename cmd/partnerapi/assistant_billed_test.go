package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// partnerapi_assistant_billed_tokens_total adds up what the clients' bills
// say: each answer's total_tokens, under its model and the client's
// contract.
func TestAssistantBilledTokensMetric(t *testing.T) {
	data := t.TempDir()
	prepaid, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=100000")
	if err != nil {
		t.Fatal(err)
	}
	postpaid, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
	base := ts.urls["assistant"]
	chat := func(key, scope string, maxTokens int) int {
		t.Helper()
		tok := assistantToken(t, base, scope, key)
		body := `{"model":"stories260K","max_tokens":` + strconv.Itoa(maxTokens) + `,"messages":[{"role":"user","content":"Once upon a time"}]}`
		req, _ := http.NewRequest("POST", base+"/api/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Usage struct {
				Total int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != 200 || answer.Usage.Total < 2 {
			t.Fatalf("chat: %d %v %+v", resp.StatusCode, err, answer)
		}
		return answer.Usage.Total
	}
	want := map[string]int{}
	want["prepaid"] += chat(prepaid["authorization_key"], "GIGACHAT_API_PERS", 5)
	want["prepaid"] += chat(prepaid["authorization_key"], "GIGACHAT_API_PERS", 9)
	want["postpaid"] += chat(postpaid["authorization_key"], "GIGACHAT_API_CORP", 7)
	for contract, n := range want {
		series := `partnerapi_assistant_billed_tokens_total{contract="` + contract + `",model="stories260K"}`
		if got := engineMetric(t, base, series); got != float64(n) {
			t.Errorf("%s = %v, want %d (the answers' total_tokens)", series, got, n)
		}
	}
}

package chatapi

import (
	"fmt"
	"testing"

	"partnerapi/internal/assistant"
)

func TestZZProbe4(t *testing.T) {
	f := newFixture(t)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	pers := f.client(assistant.ScopePers, assistant.Balance{Model: "stories260K", Tokens: 100000})
	ptok := f.token(pers, "ASSISTANT_API_PERS")
	for _, tc := range []struct{ name, path, tok, body string }{
		{"stream n2", "/api/v1/chat/completions", tok, `{"model":"stories260K","stream":true,"n":2,"max_tokens":4,"temperature":1,"messages":[{"role":"user","content":"Once"}]}`},
		{"n2", "/api/v1/chat/completions", tok, `{"model":"stories260K","n":2,"max_tokens":4,"temperature":1,"messages":[{"role":"user","content":"Once"}]}`},
		{"pers emb", "/api/v1/embeddings", ptok, `{"model":"stories260K","input":["Once"]}`},
		{"pers count", "/api/v1/tokens/count", ptok, `{"model":"stories260K","input":["Once"]}`},
		{"pers balance", "/api/v1/balance", ptok, ``},
		{"stream temp tiny", "/api/v1/chat/completions", tok, `{"model":"stories260K","stream":true,"max_tokens":3,"temperature":0.0001,"messages":[{"role":"user","content":"Once"}]}`},
	} {
		m := "POST"
		if tc.body == "" {
			m = "GET"
		}
		resp, body := f.call(m, tc.path, tc.tok, tc.body)
		fmt.Printf("=== %s: %d\n%s\n", tc.name, resp.StatusCode, body)
	}
}

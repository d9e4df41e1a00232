package chatapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// FuzzDecodeJSON holds the body decoder of every JSON operation to the
// grammar: a body it accepts is one JSON value (RFC 8259 §2), nothing
// after it but white space, and a body it refuses is refused with the
// API's own 400, never another error.
//
// The fuzzed text is at most 256 bytes, led by up to 2 KiB of white space
// so that the value still crosses the decoder's 512-byte reads. A long
// fuzzed text stalled the run: its coverage depends on its length (how
// often io.ReadAll grows its buffer), so the fuzzer's minimizer cannot
// shorten it and tries every one of its ~n²/2 substrings instead, for up
// to -fuzzminimizetime (60 s), while the only worker fuzzes nothing; runs
// stopped after 2 to 4 thousand executions.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"model":"GigaChat","messages":[{"role":"user","content":"Hi"}]}`,
		`{"model":"Embeddings","input":["a","b"]}`, `{"model":"x","input":"one"}`,
		`{} `, `{}{}`, `{} x`, `[]`, `null`, "{\"model\":\"m\"}\n", `{"a":1}}`,
	} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(510))
	}
	f.Fuzz(func(t *testing.T, s string, pad uint16) {
		if len(s) > 256 {
			return
		}
		body := strings.Repeat(" \n"[pad%2:pad%2+1], int(pad%2048)) + s
		var v map[string]any
		err := decodeJSON(strings.NewReader(body), &v)
		if err == nil {
			if !json.Valid([]byte(body)) {
				t.Fatalf("decodeJSON accepted %q, which is not one JSON value", body)
			}
			return
		}
		var ip *assistant.InvalidParams
		if !errors.As(err, &ip) || ip.Status != 400 {
			t.Fatalf("decodeJSON(%q) = %v, not a 400 InvalidParams", body, err)
		}
	})
}

// TestDecodeJSONTrailing: a body is one JSON value and white space; a
// stray closing bracket after it, which Decoder.More lets through, is
// refused like any other trailing data (found by FuzzDecodeJSON).
func TestDecodeJSONTrailing(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"model":"m"}`, true},
		{"{\"model\":\"m\"} \r\n\t", true},
		{`{"model":"m"}}`, false},
		{`{"model":"m"}]`, false},
		{`{"model":"m"} }`, false},
		{`{"model":"m"}{}`, false},
		{`{"model":"m"} x`, false},
	} {
		var v map[string]any
		if err := decodeJSON(strings.NewReader(c.body), &v); (err == nil) != c.ok {
			t.Errorf("decodeJSON(%q) = %v, want ok %v", c.body, err, c.ok)
		}
	}
}

// A chat body's member names match exactly: a member in another case is
// ignored as an unknown one is, so "Model" alone is no model and beside
// "model" it does not win, whichever comes last; inside a message too.
func TestDecodeChatMemberNameCase(t *testing.T) {
	for _, c := range []struct {
		body, model, err string
		messages         int
	}{
		{`{"model":"m","MODEL":"x","messages":[{"role":"user","content":"Hi"}]}`, "m", "", 1},
		{`{"MODEL":"x","model":"m","messages":[{"role":"user","content":"Hi"}]}`, "m", "", 1},
		{`{"Model":"x","messages":[{"role":"user","content":"Hi"}]}`, "", "", 1},
		{`{"model":"m","Messages":[{"role":"user","content":"Hi"}]}`, "m", "", 0},
	} {
		req, _, err := decodeChatRequest(strings.NewReader(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if req.Model != c.model || len(req.Messages) != c.messages {
			t.Errorf("%s: model %q with %d messages, want %q with %d", c.body, req.Model, len(req.Messages), c.model, c.messages)
		}
	}
	if _, err := decodeTokensCount(strings.NewReader(`{"Model":"m","input":["a"]}`)); err == nil || !strings.Contains(err.Error(), "model is required") {
		t.Errorf("tokens/count with Model: %v, want model is required", err)
	}
}

package chatapi

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// FuzzDecodeEmbeddings holds the /embeddings body decoder to its reading
// of input: an array of strings as it is, one string as an array of it,
// anything else (and any body decodeJSON refuses) the API's own 400; the
// model is the body's, as encoding/json reads it.
func FuzzDecodeEmbeddings(f *testing.F) {
	for _, s := range []string{`{"input":["First text","Second text"],"model":"Embeddings"}`, `{"input":"one","model":"x"}`,
		`{"input":[1]}`, `{"input":null}`, `{"input":[null,"a"]}`, `{}`, `{"model":1}`, `[]`, `{"INPUT":["a"],"Model":"m"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 512 {
			return
		}
		model, inputs, err := decodeEmbeddings(strings.NewReader(body))
		if err != nil {
			var ip *assistant.InvalidParams
			if !errors.As(err, &ip) || ip.Status != 400 {
				t.Fatalf("%q: %v, not a 400 InvalidParams", body, err)
			}
			return
		}
		var w struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal([]byte(body), &w) != nil || w.Model != model {
			t.Fatalf("%q accepted with model %q", body, model)
		}
		var many []string
		var one string
		switch {
		case json.Unmarshal(w.Input, &many) == nil:
			if !slices.Equal(many, inputs) {
				t.Fatalf("%q: inputs %q, want %q", body, inputs, many)
			}
		case json.Unmarshal(w.Input, &one) == nil:
			if len(inputs) != 1 || inputs[0] != one {
				t.Fatalf("%q: inputs %q, want [%q]", body, inputs, one)
			}
		default:
			t.Fatalf("%q: input of neither form accepted as %q", body, inputs)
		}
	})
}

// FuzzDecodeTokensCount holds the /tokens/count body decoder to the
// contract: a body it accepts names a model and has an input array (an
// empty one too), read as encoding/json reads it; every other body is the
// API's own 400.
func FuzzDecodeTokensCount(f *testing.F) {
	for _, s := range []string{`{"model":"GigaChat","input":["First text","Second text"]}`, `{"model":"m","input":[]}`,
		`{"model":"m"}`, `{"model":"m","input":null}`, `{"model":"","input":["a"]}`, `{"model":"m","input":"a"}`, `[]`, `{"MODEL":"m","Input":["x"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 512 {
			return
		}
		got, err := decodeTokensCount(strings.NewReader(body))
		if err != nil {
			var ip *assistant.InvalidParams
			if !errors.As(err, &ip) || ip.Status != 400 {
				t.Fatalf("%q: %v, not a 400 InvalidParams", body, err)
			}
			return
		}
		var w wireTokensCount
		if json.Unmarshal([]byte(body), &w) != nil || got.Model == "" || got.Model != w.Model || got.Input == nil || w.Input == nil || !slices.Equal(*got.Input, *w.Input) {
			t.Fatalf("%q accepted as %+v", body, got)
		}
	})
}

package chatapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// FuzzDecodeEmbeddings holds the /embeddings body decoder to its reading
// of input: an array of strings as it is, one string as an array of it,
// anything else (and any body decodeJSON refuses) the API's own 400; the
// model is the body's member named exactly "model" (a member named in
// another case is ignored, as an unknown one is).
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
		if !exactMembers([]byte(body), &w) || w.Model != model {
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
// empty one too), read as encoding/json reads it but for member names,
// which must match exactly; every other body is the API's own 400.
func FuzzDecodeTokensCount(f *testing.F) {
	for _, s := range []string{`{"model":"GigaChat","input":["First text","Second text"]}`, `{"model":"m","input":[]}`,
		`{"model":"m"}`, `{"model":"m","input":null}`, `{"model":"","input":["a"]}`, `{"model":"m","input":"a"}`, `[]`, `{"MODEL":"m","Input":["x"]}`,
		`{"model":"m","input":["a"],"Model":"x","INPUT":["b"]}`} {
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
		if !exactMembers([]byte(body), &w) || got.Model == "" || got.Model != w.Model || got.Input == nil || w.Input == nil || !slices.Equal(*got.Input, *w.Input) {
			t.Fatalf("%q accepted as %+v", body, got)
		}
	})
}

// exactMembers decodes the JSON object body into v as encoding/json does,
// except that only members whose names match v's json tags exactly are
// read: the API ignores a member named in another case ("Model" for
// "model"), where encoding/json would take it. It reports whether body
// decoded. It does not call jsonexact, which the decoders use, so that the
// oracle does not share the mechanism it checks.
func exactMembers(body []byte, v any) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return false
	}
	rt := reflect.TypeOf(v).Elem()
	exact := map[string]json.RawMessage{}
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if m, ok := members[name]; ok {
			exact[name] = m
		}
	}
	b, err := json.Marshal(exact)
	return err == nil && json.Unmarshal(b, v) == nil
}

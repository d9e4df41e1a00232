package assistant

import (
	"encoding/json"
	"testing"
)

// FuzzUnwrapFunctionResults holds the decoding of doubly serialised
// function results to encoding/json: a role "function" message's content
// is replaced exactly when it is a JSON string whose value is a JSON
// object, and then by that value; every other message, and the slice the
// caller passed, stay as they were.
func FuzzUnwrapFunctionResults(f *testing.F) {
	for _, s := range []string{`"{\"temperature\":3}"`, `{"r":1}`, `"sunny"`, `" \n{\"a\":[1]}"`, `"\u00a0{\"a\":1}"`,
		`"{\"a\":1} x"`, `"null"`, `"{}"`, `"{"`, `""`, `"\"{}\""`} {
		f.Add("function", s)
		f.Add("user", s)
	}
	f.Fuzz(func(t *testing.T, role, content string) {
		msgs := []Message{{Role: "user", Content: "x"}, {Role: role, Content: content}}
		out := unwrapFunctionResults(msgs)
		if msgs[1].Content != content || msgs[0].Content != "x" {
			t.Fatalf("the caller's messages changed: %+v", msgs)
		}
		want := content
		var inner string
		var obj map[string]json.RawMessage
		if role == "function" && json.Unmarshal([]byte(content), &inner) == nil &&
			json.Unmarshal([]byte(inner), &obj) == nil && obj != nil {
			want = inner
		}
		if len(out) != 2 || out[0].Role != "user" || out[0].Content != "x" || out[1].Role != role || out[1].Content != want {
			t.Fatalf("role %q content %q: got %+v, want content %q", role, content, out, want)
		}
	})
}

package banking

import (
	"encoding/json"
	"testing"
)

// FuzzParseLimitSignatures: a limit sign body is answered with signatures
// or a client fault, never an internal error; what parses has one
// signature at least and reads back the same from its own encoding.
func FuzzParseLimitSignatures(f *testing.F) {
	f.Add([]byte(`{"digestSignatures":[{"base64Encoded":"AAAA","certificateUuid":"d5d4f811-f4d4-4205-a70f-58f772eeab72"}]}`))
	f.Add([]byte(`{"digestSignatures":[]}`))
	f.Add([]byte(`{"digestSignatures":null} {}`))
	f.Add([]byte(`{"digestSignatures":[{"base64Encoded":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sigs, err := ParseLimitSignatures(b)
		if err != nil {
			if k := KindOf(err); k != KindDeserialization && k != KindValidation {
				t.Fatalf("kind %v for input: %v", k, err)
			}
			return
		}
		if len(sigs) == 0 {
			t.Fatal("parsed without a signature")
		}
		out, _ := json.Marshal(map[string]any{"digestSignatures": sigs})
		again, err := ParseLimitSignatures(out)
		if err != nil || len(again) != len(sigs) {
			t.Fatalf("round trip: %v (%s)", err, out)
		}
		for i := range sigs {
			if again[i] != sigs[i] {
				t.Fatalf("round trip: %+v, want %+v", again[i], sigs[i])
			}
		}
	})
}

// TestParseLimitSignatures: the body's faults are the partner's, named.
func TestParseLimitSignatures(t *testing.T) {
	for _, tc := range []struct {
		body string
		kind Kind // of the fault, when n is 0
		n    int  // signatures parsed
	}{
		{`{"digestSignatures":[{"base64Encoded":"AAAA","certificateUuid":"u"},{"base64Encoded":"BBBB","certificateUuid":"v"}]}`, 0, 2},
		{`{"digestSignatures":[]}`, KindValidation, 0},
		{`{}`, KindValidation, 0},
		{`{"digestSignatures":{}}`, KindDeserialization, 0},
		{`{"digestSignatures":[]} x`, KindDeserialization, 0},
		{``, KindDeserialization, 0},
	} {
		sigs, err := ParseLimitSignatures([]byte(tc.body))
		if tc.n > 0 {
			if err != nil || len(sigs) != tc.n {
				t.Errorf("%s: %d signatures (%v), want %d", tc.body, len(sigs), err, tc.n)
			}
			continue
		}
		if KindOf(err) != tc.kind {
			t.Errorf("%s: %v (kind %v), want kind %v", tc.body, err, KindOf(err), tc.kind)
		}
	}
}

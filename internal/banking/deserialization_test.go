package banking

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestDeserializationFaultFields pins the fields of a DESERIALIZATION_FAULT
// (reference §13): the path of a member of the wrong type or with a syntax
// error in its value, else an empty list, never nil.
func TestDeserializationFaultFields(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"amount as string", `{"externalId":"x","amount":"100"}`, []string{"amount"}},
		{"nested wrong type", `{"departmentalInfo":{"kbk":1}}`, []string{"departmentalInfo.kbk"}},
		{"wrong type in an array element", `{"digestSignatures":[{"certificateUuid":5}]}`, []string{"digestSignatures.certificateUuid"}},
		{"syntax error in a value", `{"externalId":"x","amount":1..5}`, []string{"amount"}},
		{"syntax error in a nested value", `{"departmentalInfo":{"kbk":tru}}`, []string{"departmentalInfo.kbk"}},
		{"truncated after a key", `{"externalId":`, []string{"externalId"}},
		{"truncated inside an array member", `{"digestSignatures":[{"base64Encoded":"a"},`, []string{"digestSignatures"}},
		{"truncated between members", `{"externalId":"x",`, []string{}},
		{"not JSON at all", `amount=1`, []string{}},
		{"empty body", ``, []string{}},
		{"data after the object", `{"amount":1} x`, []string{}},
		{"not an object", `[1]`, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Payment
			err := json.Unmarshal([]byte(tc.body), &p)
			if err == nil {
				t.Fatal("body decoded")
			}
			e := DeserializationFault([]byte(tc.body), err)
			if e.Kind != KindDeserialization || e.Fields == nil || !slices.Equal(e.Fields, tc.want) || e.Message == "" {
				t.Fatalf("got %d %q %#v, want fields %#v", e.Kind, e.Message, e.Fields, tc.want)
			}
		})
	}
}

package assistant

import (
	"encoding/json"
	"testing"
)

// FuzzValidateFunction runs /functions/validate on any body and holds it
// to what it is for: a client asks it whether a function will do before
// offering it in a chat. A description it finds valid (no errors) is one
// the chat accepts, read as the chat reads an element of functions
// (encoding/json into name, description and parameters); and every
// finding has a description and a location.
func FuzzValidateFunction(f *testing.F) {
	for _, s := range []string{
		`{"name":"weather_forecast","description":"Погода","parameters":{"type":"object","properties":{"location":{"type":"string","description":"город"}},"required":["location"]},"few_shot_examples":[{"request":"Погода в Москве","params":{"location":"Москва"}}]}`,
		`{"name":"f","parameters":{"type":"object"}}`, `{"name":"1f","parameters":{"type":"object"}}`,
		`{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"array","items":{"type":"strin"}}},"required":["b"]}}`,
		`{"name":"f","parameters":{"type":["object","null"]},"return_parameters":{"type":"object"}}`, `[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := ValidateFunction(raw)
		if err != nil {
			if len(res.Errors)+len(res.Warnings) != 0 {
				t.Fatalf("ValidateFunction(%q) refused the body and found %+v", raw, res)
			}
			return
		}
		for _, is := range append(res.Errors[:len(res.Errors):len(res.Errors)], res.Warnings...) {
			if is.Description == "" || is.SchemaLocation == "" {
				t.Fatalf("ValidateFunction(%q): finding %+v", raw, is)
			}
		}
		if !res.Valid() {
			return
		}
		var wire struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &wire); err != nil {
			t.Fatalf("valid function %q does not decode as the chat reads it: %v", raw, err)
		}
		fns := []Function{{Name: wire.Name, Description: wire.Description, Parameters: wire.Parameters}}
		if err := checkFunctions(fns, &FunctionChoice{Mode: FunctionCallName, Name: wire.Name}); err != nil {
			t.Fatalf("valid function %q refused by the chat: %v", raw, err)
		}
	})
}

// TestValidateFunctionReadsAsChat: the members the chat reads are read
// as it reads them, names in any letter case and the last match winning,
// so that a description valid here is the function the chat gets (found
// while checking FuzzValidateFunction's property by hand; the crasher is
// testdata/fuzz/FuzzValidateFunction/name-case).
func TestValidateFunctionReadsAsChat(t *testing.T) {
	for _, c := range []struct {
		body  string
		valid bool
	}{
		{`{"name":"ok","NAME":"1x","parameters":{"type":"object"}}`, false},
		{`{"NAME":"1x","name":"ok","parameters":{"type":"object"}}`, true},
		{`{"Name":"ok","Parameters":{"type":"object"}}`, true},
		{`{"name":"ok","parameters":{"type":"object"},"PARAMETERS":[]}`, false},
	} {
		res, err := ValidateFunction([]byte(c.body))
		if err != nil || res.Valid() != c.valid {
			t.Errorf("ValidateFunction(%s) = %+v, %v; want valid %v", c.body, res, err, c.valid)
		}
	}
}

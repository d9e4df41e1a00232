package homeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The model types that read themselves (smarthome.Dependency,
// IntegerValues and FloatValues) decode with a fresh json.Unmarshal, which
// does not inherit the admin decoder's DisallowUnknownFields: a misspelt
// member inside them ({"integer_values":{"min":"1","max":"9","stepp":"2"}})
// was dropped without a word, and the administrator believed the model had
// a step. The admin API checks those parts against the plain shapes below.
// Agents' inline MQTT models keep the lenient reading the provider has
// (reference: unknown members there are ignored).

// strictModelParts is the part of a model whose members the admin decoder
// cannot check by itself.
type strictModelParts struct {
	Dependencies map[string]struct {
		Key json.RawMessage `json:"key"`
		// Both names of the list are read (smarthome.Dependency). The
		// values themselves stay as lenient as every value object is
		// (TestColourValueNeedsHSAndV): members beyond a value's own are
		// ignored, in a model as in an agent's status.
		Value  json.RawMessage `json:"value"`
		Values json.RawMessage `json:"values"`
	} `json:"dependencies"`
	AllowedValues map[string]struct {
		Type          json.RawMessage `json:"type"`
		IntegerValues *struct {
			Min  json.RawMessage `json:"min"`
			Max  json.RawMessage `json:"max"`
			Step json.RawMessage `json:"step"`
		} `json:"integer_values"`
		FloatValues *struct {
			Min json.RawMessage `json:"min"`
			Max json.RawMessage `json:"max"`
		} `json:"float_values"`
		EnumValues *struct {
			Values json.RawMessage `json:"values"`
		} `json:"enum_values"`
	} `json:"allowed_values"`
}

// checkModelParts refuses a member body's dependencies and allowed_values
// do not have, down to their value objects. It runs after the model decoded, so body is one
// JSON object and the members' JSON types are already right; only unknown
// names are left to find.
func checkModelParts(body []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return err
	}
	// decodeOne has refused every top-level name in another case, so the
	// parts are under their own names; each is decoded alone, refusing
	// unknown members and names in another case.
	var p strictModelParts
	for k, raw := range top {
		var dst any
		switch k {
		case "dependencies":
			dst = &p.Dependencies
		case "allowed_values":
			dst = &p.AllowedValues
		default:
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if err := inexactName(raw, dst); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// Package jsonmsg words the errors of encoding/json for the clients of the
// APIs, whose answers quote them.
package jsonmsg

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Of is err's text as a client may read it. A syntax error's own text
// names only the JSON it met and is kept, but a value of the wrong type is
// reported by encoding/json in Go's terms ("json: cannot unmarshal array
// into Go value of type chatapi.wireTokensCount"), which tells a client the
// server's type names instead of what it sent wrong. Such an error is said
// in JSON's terms instead: the member, as the dotted path encoding/json
// gives (array indices left out; "the body" for the value itself), the
// JSON type it takes and what came instead.
func Of(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		// DisallowUnknownFields names the member as the client spelt it,
		// which may be of any length.
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
			return `json: unknown field "` + Echo(strings.TrimSuffix(name, `"`)) + `"`
		}
		// json.Number quotes the whole string it could not take.
		const badNumber, into = "json: invalid number literal, trying to unmarshal ", " into Number"
		if literal, ok := strings.CutPrefix(msg, badNumber); ok && strings.HasSuffix(literal, into) {
			return badNumber + Echo(strings.TrimSuffix(literal, into)) + into
		}
		return msg
	}
	where := Echo(te.Field)
	if where == "" {
		where = "the body"
	}
	want := typeName(te.Type)
	if literal, ok := strings.CutPrefix(te.Value, "number "); ok {
		// A number encoding/json could not store: a fraction or an
		// exponent where an integer belongs, else a number out of the
		// member's range.
		if want == "an integer" && strings.ContainsAny(literal, ".eE") {
			return where + ": expected an integer, got " + Echo(literal)
		}
		return where + ": " + Echo(literal) + " is out of range"
	}
	return where + ": expected " + want + ", got " + valueName(te.Value)
}

// typeName is the JSON type a Go type is read from.
func typeName(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default:
		return "a JSON value"
	}
}

// valueName names the kind of JSON value encoding/json met, as its
// UnmarshalTypeError.Value gives it ("string", "number", "bool", "array",
// "object").
func valueName(v string) string {
	switch v {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + v
	case "":
		return "another value"
	default:
		return "a " + v
	}
}

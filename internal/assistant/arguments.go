package assistant

import (
	"bytes"
	"encoding/json"
	"errors"
)

// fixArguments returns the arguments object generated with every member of
// fixed set to fixed's value: a member the model wrote keeps its place with
// the caller's value, and members it left out follow in fixed's order. This
// is function_call.partial_arguments: the caller sets some arguments and
// the model generates the rest, so what the model wrote for a fixed
// argument does not reach the client. Both must be JSON objects; generated
// comes back unchanged when fixed has no members.
func fixArguments(generated, fixed json.RawMessage) (json.RawMessage, error) {
	fixedKeys, fixedVals, err := objectMembers(fixed)
	if err != nil {
		return nil, err
	}
	if len(fixedKeys) == 0 {
		return generated, nil
	}
	keys, vals, err := objectMembers(generated)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(fixedKeys))
	for i, k := range fixedKeys {
		// A key given twice: the last value counts, as encoding/json
		// reads such an object.
		at[k] = i
	}
	used := make([]bool, len(fixedKeys))
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	member := func(k string, v json.RawMessage) error {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		if err := writeJSONString(&out, k); err != nil {
			return err
		}
		out.WriteByte(':')
		return json.Compact(&out, v)
	}
	for i, k := range keys {
		v := vals[i]
		if j, ok := at[k]; ok {
			if used[j] {
				continue // a member the model wrote twice goes out once
			}
			v, used[j] = fixedVals[j], true
		}
		if err := member(k, v); err != nil {
			return nil, err
		}
	}
	for j, k := range fixedKeys {
		if at[k] != j || used[j] {
			continue
		}
		if err := member(k, fixedVals[j]); err != nil {
			return nil, err
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// objectMembers returns a JSON object's member names and raw values in the
// order they are written.
func objectMembers(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("arguments are not a JSON object")
	}
	var (
		keys []string
		vals []json.RawMessage
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, errors.New("data after the arguments object")
	}
	return keys, vals, nil
}

// writeJSONString writes s as a JSON string without encoding/json's HTML
// escaping, which would turn a key's "<" into \u003c.
func writeJSONString(buf *bytes.Buffer, s string) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

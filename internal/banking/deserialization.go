package banking

import (
	"bytes"
	"encoding/json"
	"errors"
	"partnerapi/internal/jsonmsg"
	"strings"
)

// DeserializationFault is the DESERIALIZATION_FAULT of a body that
// encoding/json refused with err (reference §13). Its Fields are never nil:
// the reference's envelope always carries `fields` in this cause, so a
// client reads one shape. They name the offending member's path when it is
// known — the member of a wrong JSON type, or the member whose value holds
// a syntax error — and are empty otherwise (an unparseable body outside
// any member, a body that is not an object).
func DeserializationFault(body []byte, err error) *Error {
	e := &Error{Kind: KindDeserialization, Message: "Ошибка десериализации запроса: неверный формат данных", Fields: []string{}}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			field := jsonmsg.Echo(te.Field)
			e.Fields = []string{field}
			e.Message = "Ошибка десериализации поля " + field + ": неверный тип значения"
		}
		return e
	}
	if path := syntaxErrorPath(body); path != "" {
		// The path is made of the client's member names, of any length.
		path = jsonmsg.Echo(path)
		e.Fields = []string{path}
		e.Message = "Ошибка десериализации поля " + path + ": неверный формат JSON"
	}
	return e
}

// jsonFrame is an object or array open where a syntax error was met; in an
// object, inValue says a member's key was read and key is that member.
type jsonFrame struct {
	object, inValue bool
	key             string
}

// syntaxErrorPath walks body token by token up to its first syntax error
// and returns the dotted path of the object members whose values enclose
// it, as encoding/json names a field in UnmarshalTypeError (array indices
// left out), or "" when the error is outside every member or there is none.
func syntaxErrorPath(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []jsonFrame
	// valueDone ends the value of the innermost object's member.
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key, stack[n-1].inValue = "", false
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if len(stack) == 0 {
				return "" // no value open: an empty body or data after the value
			}
			var keys []string
			for _, f := range stack {
				if f.object && f.inValue {
					keys = append(keys, f.key)
				}
			}
			return strings.Join(keys, ".")
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, jsonFrame{object: true})
			case '[':
				stack = append(stack, jsonFrame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && !stack[n-1].inValue {
				stack[n-1].key, stack[n-1].inValue = t, true
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

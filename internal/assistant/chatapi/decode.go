package chatapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"partnerapi/internal/assistant"
	"partnerapi/internal/jsonexact"
	"partnerapi/internal/web"
)

// wireMessage is a chat message as clients send it; unknown keys (id and
// others) are ignored (reference §6). Attachments are ids of the client's
// uploaded files (§3.9).
type wireMessage struct {
	Role             string            `json:"role"`
	Content          *string           `json:"content"`
	Name             string            `json:"name"`
	FunctionCall     *wireFunctionCall `json:"function_call"`
	FunctionsStateID string            `json:"functions_state_id"`
	Attachments      []string          `json:"attachments"`
}

type wireFunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireChatRequest struct {
	Model             string          `json:"model"`
	Messages          []wireMessage   `json:"messages"`
	Functions         []wireFunction  `json:"functions"`
	Temperature       *float64        `json:"temperature"`
	TopP              *float64        `json:"top_p"`
	N                 *wholeNumber    `json:"n"`
	Stream            bool            `json:"stream"`
	MaxTokens         *wholeNumber    `json:"max_tokens"`
	RepetitionPenalty *float64        `json:"repetition_penalty"`
	UpdateInterval    float64         `json:"update_interval"`
	FunctionCall      json.RawMessage `json:"function_call"`
}

// decodeChatRequest parses a chat completion body. It returns a 400-class
// InvalidParams for anything that is not a well-formed request.
func decodeChatRequest(r io.Reader) (assistant.ChatRequest, bool, error) {
	var w wireChatRequest
	if err := decodeJSON(r, &w); err != nil {
		return assistant.ChatRequest{}, false, err
	}
	req := assistant.ChatRequest{
		Model:             w.Model,
		Temperature:       w.Temperature,
		TopP:              w.TopP,
		RepetitionPenalty: w.RepetitionPenalty,
		UpdateInterval:    w.UpdateInterval,
	}
	if w.N != nil {
		// Clamped into an int of 32-bit builds; the service refuses
		// anything outside 1..4 whatever its size.
		v := int(max(min(int64(*w.N), 1<<30), -1<<30))
		req.N = &v
	}
	if w.MaxTokens != nil {
		// Clamp before converting so 999999999999 does not overflow an int
		// on 32-bit builds (a negative one either, which the service
		// refuses); the engine clamps again to the context window.
		v := int(max(min(int64(*w.MaxTokens), 1<<30), -1<<30))
		req.MaxTokens = &v
	}
	for i, m := range w.Messages {
		if m.Role == "" {
			return req, false, &assistant.InvalidParams{Status: 400, Message: fmt.Sprintf("messages[%d].role is required", i)}
		}
		msg := assistant.Message{Role: m.Role, Name: m.Name, FunctionsStateID: m.FunctionsStateID, Attachments: m.Attachments}
		if m.Content != nil {
			msg.Content = *m.Content
		}
		if m.FunctionCall != nil {
			msg.FunctionCall = &assistant.FunctionCall{Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, f := range w.Functions {
		req.Functions = append(req.Functions, assistant.Function{Name: f.Name, Description: f.Description, Parameters: f.Parameters})
	}
	fc, err := decodeFunctionCall(w.FunctionCall)
	if err != nil {
		return req, false, err
	}
	req.FunctionCall = fc
	return req, w.Stream, nil
}

// decodeFunctionCall reads function_call: "auto", "none" or {"name": ...,
// "partial_arguments"?: {...}}, whose partial arguments must be a JSON
// object (null or absent: none). Values other than these are left for the
// service to refuse with a 422.
func decodeFunctionCall(raw json.RawMessage) (assistant.FunctionChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return assistant.FunctionChoice{}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if mode == "" {
			mode = "invalid"
		}
		return assistant.FunctionChoice{Mode: mode}, nil
	}
	var named struct {
		Name             string          `json:"name"`
		PartialArguments json.RawMessage `json:"partial_arguments"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return assistant.FunctionChoice{}, &assistant.InvalidParams{Status: 400, Message: `function_call must be "auto", "none" or {"name": ...}`}
	}
	partial := bytes.TrimSpace(named.PartialArguments)
	switch {
	case len(partial) == 0 || string(partial) == "null":
		partial = nil
	case partial[0] != '{':
		return assistant.FunctionChoice{}, &assistant.InvalidParams{Status: 400, Message: "function_call.partial_arguments must be a JSON object"}
	}
	return assistant.FunctionChoice{Mode: assistant.FunctionCallName, Name: named.Name, PartialArguments: partial}, nil
}

// wholeNumber is an integer member of a request (n, max_tokens) that also
// takes a JSON number written with a fraction or an exponent whose value
// is whole, such as 1.0 or 1.6e1. JSON has one number type, and the
// contract's "type: integer" is JSON Schema 2020-12's, which matches any
// number with a zero fractional part; a client that writes its numbers as
// floats (Python's json.dumps of 1.0) sends such a body, which
// encoding/json refused as a type error. A fraction that is not zero
// (1.5), a number beyond int64 and a value of another JSON type are
// refused with encoding/json's own error, which jsonMessage words as
// before. A whole number beyond int64 is read as int64's bound of its
// sign: max_tokens is "clamped to the room the prompt leaves" whatever its
// size (reference §3.2, §6: clients send huge values), and an n that large
// is out of its range [1, 4], which the service answers with a 422 naming
// the range rather than a 400 naming int64's.
type wholeNumber int64

func (n *wholeNumber) UnmarshalJSON(b []byte) error {
	var v int64
	err := json.Unmarshal(b, &v)
	if err != nil {
		var ok bool
		if v, ok = wholeLiteral(string(b)); !ok {
			return err
		}
	}
	*n = wholeNumber(v)
	return nil
}

// wholeLiteral reads a JSON number literal (checked against RFC 8259's
// grammar by the decoder before any Unmarshaler sees it) whose value is a
// whole number, as an int64: one beyond int64 is int64's bound of its
// sign. Its digits and decimal exponent are counted rather than parsed as
// a float64, which would round 1.0000000000000000001 to 1, and a huge
// exponent is never expanded.
func wholeLiteral(s string) (int64, bool) {
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return 0, false // a string, an array or another value
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mantissa, exponent := s, "0"
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exponent = s[:i], s[i+1:]
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, true // zero, whatever its exponent
	}
	trimmed := strings.TrimRight(digits, "0")
	// The value is trimmed × 10^shift.
	bound := int64(math.MaxInt64)
	if neg {
		bound = math.MinInt64
	}
	e, err := strconv.Atoi(exponent)
	if err != nil || e > 1<<30 || e < -1<<30 {
		// For the digits a body can hold, an exponent this large is a
		// fraction when negative and beyond int64 when positive; the
		// bound keeps shift from overflowing.
		if strings.HasPrefix(exponent, "-") {
			return 0, false
		}
		return bound, true
	}
	// trimmed ends in a digit other than 0, so a negative shift leaves
	// a fraction.
	shift := e - len(frac) + len(digits) - len(trimmed)
	if shift < 0 {
		return 0, false
	}
	if len(trimmed)+shift > 19 {
		return bound, true
	}
	if neg {
		trimmed = "-" + trimmed
	}
	v, err := strconv.ParseInt(trimmed+strings.Repeat("0", shift), 10, 64)
	if err != nil {
		// Nineteen digits beyond int64.
		return bound, true
	}
	return v, true
}

type wireTokensCount struct {
	Model string    `json:"model"`
	Input *[]string `json:"input"`
}

func decodeTokensCount(r io.Reader) (wireTokensCount, error) {
	var w wireTokensCount
	if err := decodeJSON(r, &w); err != nil {
		return w, err
	}
	if w.Model == "" {
		return w, &assistant.InvalidParams{Status: 400, Message: "model is required"}
	}
	// The contract requires input: a body without it is a malformed
	// request, not one with nothing to count (an empty array is that).
	if w.Input == nil {
		return w, &assistant.InvalidParams{Status: 400, Message: "input is required"}
	}
	return w, nil
}

// errBodyTooLarge passes the platform's body-limit error through decoding.
var errBodyTooLarge = errors.New("body too large")

// decodeJSON reads the body and decodes it into v. A body over the limit
// is errBodyTooLarge (413); one that cannot be read (a broken chunked
// encoding, a body shorter than its Content-Length) is the client's
// malformed request, 400, not a 413. A body that is not UTF-8 is refused
// too (RFC 8259 §8.1): encoding/json would take each bad byte as U+FFFD, and
// the chat would then be answered, and billed, over text the client never
// sent.
func decodeJSON(r io.Reader, v any) error {
	body, err := io.ReadAll(r)
	if err != nil {
		if web.IsBodyTooLarge(err) {
			return errors.Join(errBodyTooLarge, err)
		}
		return &assistant.InvalidParams{Status: 400, Message: "could not read the body"}
	}
	if !utf8.Valid(body) {
		return &assistant.InvalidParams{Status: 400, Message: "invalid JSON body: not UTF-8"}
	}
	// Member names match exactly, as the original API's do: "Model" is
	// not the model, and beside "model" it does not override it.
	dec := json.NewDecoder(bytes.NewReader(jsonexact.Names(body, v)))
	if err := dec.Decode(v); err != nil {
		return &assistant.InvalidParams{Status: 400, Message: jsonErrorMessage(err)}
	}
	// Only white space may follow the value. Decoder.More would not do:
	// it answers false before a closing ']' or '}', so a body such as
	// {"model":"m"}} passed as one object.
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) != 0 {
		return &assistant.InvalidParams{Status: 400, Message: "invalid JSON body: trailing data"}
	}
	return nil
}

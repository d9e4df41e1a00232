package chatapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"partnerapi/internal/assistant"
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
	N                 *int            `json:"n"`
	Stream            bool            `json:"stream"`
	MaxTokens         *int64          `json:"max_tokens"`
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
		N:                 w.N,
		RepetitionPenalty: w.RepetitionPenalty,
		UpdateInterval:    w.UpdateInterval,
	}
	if w.MaxTokens != nil {
		// Clamp before converting so 999999999999 does not overflow an int
		// on 32-bit builds; the engine clamps again to the context window.
		v := int(min(*w.MaxTokens, 1<<30))
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
// "partial_arguments"?: {...}} (partial arguments are accepted and ignored).
// Values other than these are left for the service to refuse with a 422.
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
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return assistant.FunctionChoice{}, &assistant.InvalidParams{Status: 400, Message: `function_call must be "auto", "none" or {"name": ...}`}
	}
	return assistant.FunctionChoice{Mode: assistant.FunctionCallName, Name: named.Name}, nil
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

func decodeJSON(r io.Reader, v any) error {
	body, err := io.ReadAll(r)
	if err != nil {
		return errors.Join(errBodyTooLarge, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
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

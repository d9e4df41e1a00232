package assistant

import (
	"context"
	"errors"
	"fmt"
	"math"
	"partnerapi/internal/jsonmsg"
	"regexp"
	"time"
)

// ChatRequest is a chat completion request as decoded from the wire; nil
// pointers mean "use the default" (reference §3.2).
type ChatRequest struct {
	Model             string
	Messages          []Message
	Functions         []Function
	FunctionCall      FunctionChoice
	Temperature       *float64
	TopP              *float64
	N                 *int
	MaxTokens         *int
	RepetitionPenalty *float64
	UpdateInterval    float64
}

// Defaults of the chat parameters (reference §3.2).
const (
	DefaultTemperature       = 0.87
	DefaultTopP              = 0.47
	DefaultRepetitionPenalty = 1.07
	DefaultMaxTokens         = 512
)

var (
	roles        = map[string]bool{"system": true, "user": true, "assistant": true, "function": true, "search_result": true, "function_in_progress": true}
	functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ModelRole maps a message's role to the one models and OpenAI-style servers
// know, for engines to share: the provider's "search_result" (retrieved text
// the client supplies) is the user's, and "function_in_progress" (the
// provider's progress notice) is for no model to see, so keep is false.
// The standard roles pass unchanged.
func ModelRole(role string) (mapped string, keep bool) {
	switch role {
	case "search_result":
		return "user", true
	case "function_in_progress":
		return "", false
	}
	return role, true
}

// UpdateEvery is update_interval's seconds as the pause between two stream
// events. An interval longer than time.Duration holds (1e300 from JSON,
// +Inf from a gRPC float) is the longest one, so that all the text comes
// in the final events: converted as it is, it was implementation-defined,
// a negative duration on amd64 that sent every delta at once.
func UpdateEvery(seconds float64) time.Duration {
	const longest = float64(math.MaxInt64 / int64(time.Second))
	if !(seconds > 0) {
		return 0
	}
	if seconds >= longest {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds * float64(time.Second))
}

// Chat is a validated request ready to run: the resolved model and the
// engine request.
type Chat struct {
	Principal Principal
	Model     ModelInfo
	Request   GenerateRequest
	// Attached says messages carried attached files, whose text is now in
	// them: a prompt over the context window is then the provider's 422.
	Attached bool
}

// PrepareChat validates req, resolves its model and checks the client's
// funds, so that every refusal happens before a stream starts.
func (s *Service) PrepareChat(ctx context.Context, p Principal, req ChatRequest) (Chat, error) {
	if req.Model == "" {
		return Chat{}, badRequest("model is required")
	}
	if len(req.Messages) == 0 {
		return Chat{}, badRequest("messages must not be empty")
	}
	for i, m := range req.Messages {
		if !roles[m.Role] {
			return Chat{}, invalid("unknown message role " + jsonmsg.Echo(m.Role))
		}
		if m.Role == "system" && i != 0 {
			return Chat{}, invalid("system message must be the first message")
		}
	}
	if !callsAnswered(req.Messages) {
		return Chat{}, invalid("every assistant function call must have a result in history")
	}
	msgs, attached, err := s.attach(ctx, p, req.Model, req.Messages)
	if err != nil {
		return Chat{}, err
	}
	g := GenerateRequest{
		Messages:          unwrapFunctionResults(msgs),
		Functions:         req.Functions,
		Temperature:       DefaultTemperature,
		TopP:              DefaultTopP,
		RepetitionPenalty: DefaultRepetitionPenalty,
		MaxTokens:         DefaultMaxTokens,
		N:                 1,
	}
	// The ranges are written so that NaN falls outside them: JSON cannot
	// carry it, but a gRPC client's float can, and NaN compares false with
	// every bound, so "< 0 || > 2" let it through to the samplers (and an
	// upstream's JSON encoder, which refuses it as a 500).
	if v := req.Temperature; v != nil {
		if !(*v >= 0 && *v <= 2) {
			return Chat{}, invalid("temperature must be in range [0, 2]")
		}
		g.Temperature = *v
	}
	if v := req.TopP; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return Chat{}, invalid("top_p must be in range [0, 1]")
		}
		// An explicit 0 means the top token alone; the flag tells it from
		// the zero value of requests built without a top_p, which keeps
		// meaning "no cut" for the engines and tools that build them.
		g.TopP, g.TopPSet = *v, true
	}
	if v := req.RepetitionPenalty; v != nil {
		// The interval is open at +inf too, which a gRPC float can be.
		if !(*v > 0) || math.IsInf(*v, 1) {
			return Chat{}, invalid("repetition_penalty must be in range (0, +inf)")
		}
		g.RepetitionPenalty = *v
	}
	if v := req.N; v != nil {
		if *v < 1 || *v > 4 {
			return Chat{}, invalid("n must be in range [1, 4]")
		}
		g.N = *v
	}
	if v := req.MaxTokens; v != nil {
		if *v < 1 {
			return Chat{}, invalid("max_tokens must be positive")
		}
		// Huge values (clients send 999999999) are clamped by the engine to
		// the room the prompt leaves in the context window.
		g.MaxTokens = *v
	}
	if req.UpdateInterval < 0 {
		return Chat{}, invalid("update_interval must not be negative")
	}
	if math.IsNaN(req.UpdateInterval) {
		return Chat{}, invalid("update_interval must be a number of seconds, not NaN")
	}
	g.FunctionCall = req.FunctionCall
	if err := checkFunctions(req.Functions, &g.FunctionCall); err != nil {
		return Chat{}, err
	}
	m, err := s.ResolveModel(ctx, req.Model)
	if err != nil {
		return Chat{}, err
	}
	if m.Type == TypeEmbedder {
		return Chat{}, invalid("model " + jsonmsg.Echo(req.Model) + " is an embeddings model; use /embeddings")
	}
	if len(req.Functions) > 0 && !m.SupportsFunctions {
		return Chat{}, ErrNoFunctions
	}
	if err := s.checkFunds(ctx, p, m.Name); err != nil {
		return Chat{}, err
	}
	g.Model = m.Name
	return Chat{Principal: p, Model: m, Request: g, Attached: attached}, nil
}

// Run generates a prepared chat and bills it. A generation the client cut
// short (cut.go) is billed for what it consumed and returns the engine's
// error with that usage; one that failed on our side bills nothing and
// returns a zero usage, so that no answer reports tokens it was not billed
// for. Either way the bill is made once, here, after the engine has
// returned, so a final token racing a cancellation cannot be billed twice.
//
// Function calls: an engine that returns them parsed (an upstream) is
// trusted with the parsing; for one that only generates text the reply is
// parsed here, with the streamed text held back from the first <tool_call>
// on. Either way a call whose arguments are no JSON object, or of a
// function the request did not offer or function_call does not allow,
// ends its choice with finish_reason "error" instead. Every call gets a
// fresh functions_state_id, and the arguments function_call's
// partial_arguments fixes.
func (s *Service) Run(ctx context.Context, c Chat, emit func(Delta) error) (Result, error) {
	req := c.Request
	var tc *textCalls
	if !s.nativeFunctionCalls(req.Model) {
		if tc = prepareTextCalls(&req, emit); tc != nil {
			emit = tc.wrap()
		}
	}
	// The meter sits outside the function-call filter, so text held back
	// from the client is counted too: it was generated.
	meter := newCutMeter(emit)
	res, err := s.engine.Generate(ctx, req, meter.relayFunc())
	switch {
	case err == nil:
	case meter.clientGone(ctx, err):
		res.Usage = s.cutUsage(ctx, req, res.Usage, meter)
	default:
		res.Usage = Usage{}
		if c.Attached && errors.Is(err, ErrContextWindow) {
			return res, ErrAttachmentContext
		}
		return res, err
	}
	// The client may be gone (or go right after the last token): billing
	// must not be lost with its context.
	if berr := s.bill(context.WithoutCancel(ctx), c.Principal, c.Model.Name, res.Usage); berr != nil {
		berr = fmt.Errorf("billing failed: %w", berr)
		if err != nil {
			// The transports answer a client that is gone with nothing
			// and log nothing (499, CANCELLED), so a lost bill would go
			// unnoticed unless it is logged here.
			s.cfg.Log.ErrorContext(ctx, "assistant: billing a chat the client cut short failed", "client_id", c.Principal.ClientID,
				"model", c.Model.Name, "usage", fmt.Sprintf("%+v", res.Usage), "err", berr)
		}
		return res, errors.Join(err, berr)
	}
	if err != nil {
		return res, err
	}
	if tc != nil {
		if err := tc.finish(&res); err != nil {
			return res, err
		}
	}
	for i := range res.Choices {
		ch := &res.Choices[i]
		if ch.FunctionCall != nil && (!validArguments(ch.FunctionCall.Arguments) || !callable(c.Request, ch.FunctionCall.Name)) {
			ch.FunctionCall, ch.FinishReason = nil, "error"
		}
		if fixed := c.Request.FunctionCall.PartialArguments; ch.FunctionCall != nil && len(fixed) > 0 {
			// callable let only the named function through, and both are
			// objects (validArguments, the transport's decoding), so this
			// fails only if a transport let a non-object through: the
			// choice then ends as a call that cannot be used does, after
			// the bill, rather than failing a chat that was billed.
			if args, err := fixArguments(ch.FunctionCall.Arguments, fixed); err == nil {
				ch.FunctionCall.Arguments = args
			} else {
				ch.FunctionCall, ch.FinishReason = nil, "error"
			}
		}
		if ch.FunctionCall != nil && ch.FunctionsStateID == "" {
			ch.FunctionsStateID = newUUID()
		}
	}
	return res, nil
}

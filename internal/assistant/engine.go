package assistant

import (
	"context"
	"encoding/json"
	"errors"
)

// Engine is what the assistant needs from an inference backend: the in-process
// GGUF engine (internal/inference/local) and the OpenAI-compatible upstream
// client both implement it. The chat service owns validation, balances and
// concurrency; an Engine only lists its models, counts tokens and generates.
type Engine interface {
	// Models lists the models this engine serves.
	Models(ctx context.Context) ([]ModelInfo, error)
	// CountTokens counts the tokens of text with the model's own tokenizer,
	// without special tokens such as BOS.
	CountTokens(ctx context.Context, model string, text string) (int, error)
	// Generate renders the messages with the model's chat template, checks the
	// prompt against the context window (ErrContextWindow when the prompt does
	// not leave room for at least one token), clamps MaxTokens to the room left,
	// and generates req.N choices. emit is called for every piece of text as it
	// is produced, in order per choice; an emit error stops generation and is
	// returned. Cancelling ctx stops generation at once and returns ctx.Err().
	// With an error the Result's Usage counts what the generation consumed
	// up to it (the prompt tokens computed, every token generated), which
	// the service bills when the client cut the generation short; an
	// engine that cannot tell leaves it zero, and the service then counts
	// the deltas it relayed (cut.go).
	Generate(ctx context.Context, req GenerateRequest, emit func(Delta) error) (Result, error)
}

// ModelInfo describes one served model.
type ModelInfo struct {
	Name              string // served name, e.g. "stories260K"
	Version           string // e.g. "1.0"; the public id is Name:Version
	OwnedBy           string
	Type              string // chat | embedder
	ContextWindow     int
	SupportsFunctions bool
}

// Model types (reference §3.1).
const (
	TypeChat     = "chat"
	TypeEmbedder = "embedder"
)

// Message is one chat message as the API receives it.
type Message struct {
	Role         string
	Content      string
	Name         string
	FunctionCall *FunctionCall
	// FunctionsStateID is the id this API gave the function call an
	// assistant message carries; upstreams use it as the OpenAI tool call id.
	FunctionsStateID string
	// Attachments are ids of the client's uploaded files (reference §3.9).
	// PrepareChat puts a text file's content into the message and clears
	// the list, so engines never see it.
	Attachments []string
}

// FunctionCall is a function call; Arguments is a JSON object.
type FunctionCall struct {
	Name      string
	Arguments json.RawMessage
}

// Function describes a callable function offered to the model.
type Function struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Function call modes of a request's function_call (reference §3.2).
const (
	FunctionCallAuto = "auto" // the model decides (the default when functions are given)
	FunctionCallNone = "none" // answer in text
	FunctionCallName = "name" // call the function FunctionChoice.Name
)

// FunctionChoice is the request's function_call: "auto", "none" or
// {"name": ..., "partial_arguments"?: {...}}.
type FunctionChoice struct {
	Mode string
	Name string
	// PartialArguments, with Mode FunctionCallName, is a JSON object of
	// arguments the caller fixes: the provider's documentation says the
	// model generates the others itself, so the call that comes back
	// carries these values whatever the model wrote for them (Service.Run).
	PartialArguments json.RawMessage
}

// GenerateRequest is a validated chat request addressed to one engine.
type GenerateRequest struct {
	Model             string // the model's served Name (already resolved)
	Messages          []Message
	Functions         []Function
	FunctionCall      FunctionChoice
	Temperature       float64 // < 0.001 means greedy
	TopP              float64 // nucleus mass; 1, or 0 while TopPSet is false, means no cut
	TopPSet           bool    // the client gave TopP: an explicit 0 keeps only the most probable token, as in llama.cpp
	RepetitionPenalty float64 // 1 is neutral
	MaxTokens         int
	N                 int    // number of choices, 1..4
	Seed              uint64 // 0 means a random seed
}

// Delta is a piece of generated text of one choice.
type Delta struct {
	Index int
	Text  string
}

// Choice is the final state of one generated choice.
type Choice struct {
	Index        int
	Text         string
	FinishReason string // stop | length | function_call | error
	// FunctionCall is the call the model made (FinishReason
	// "function_call"); Arguments is a JSON object.
	FunctionCall *FunctionCall
	// FunctionsStateID identifies the call (a UUID the service assigns).
	FunctionsStateID string
}

// Usage counts tokens of one generation. PromptTokens counts the whole
// prompt, PrecachedPromptTokens the part of it reused from the cache.
type Usage struct {
	PromptTokens          int
	CompletionTokens      int
	PrecachedPromptTokens int
}

// UncachedPromptTokens is the prompt tokens the client pays for: those not
// reused from the cache. The provider's prompt_tokens counts these alone
// and its total_tokens, what it bills, is them and the completion
// (reference §3.3: total_tokens is billable with the cached tokens
// subtracted, while its recorded answers have total_tokens =
// prompt_tokens + completion_tokens beside a nonzero
// precached_prompt_tokens), so the transports report them.
func (u Usage) UncachedPromptTokens() int {
	return max(u.PromptTokens-u.PrecachedPromptTokens, 0)
}

// Result is the outcome of Generate.
type Result struct {
	Choices []Choice
	Usage   Usage
}

// NativeFunctionCaller is implemented by engines whose backend returns
// function calls already parsed (an OpenAI-compatible server's tool_calls).
// For other engines the service reads the calls out of the generated text
// (the <tool_call> blocks of Qwen- and Hermes-style templates).
type NativeFunctionCaller interface {
	NativeFunctionCalls(model string) bool
}

// Embedding is one input's vector and the tokens it took.
type Embedding struct {
	Vector       []float32
	PromptTokens int
}

// Embedder is implemented by engines that can embed text with a model of
// type "embedder". ErrNotEmbedder means the model exists but cannot.
type Embedder interface {
	Embed(ctx context.Context, model string, inputs []string) ([]Embedding, error)
}

// TemplateError is a conversation the model's chat template refuses to
// render: the template's own raise_exception (roles that must alternate,
// a system message it allows none of) or a shape it cannot render. The
// client's messages are at fault and a retry cannot help, so transports
// answer it as invalid params, not as a server error.
type TemplateError struct {
	Reason string // for the client: the template's message, or a general one
	Err    error  // the renderer's own error
}

func (e *TemplateError) Error() string { return "chat template refuses the messages: " + e.Reason }
func (e *TemplateError) Unwrap() error { return e.Err }

// Errors an Engine returns; the transports map them to their envelopes.
var (
	ErrContextWindow = errors.New("prompt does not fit the model's context window")
	ErrNoSuchModel   = errors.New("no such model")
	ErrEngineBusy    = errors.New("inference engine is busy")
	ErrNotEmbedder   = errors.New("model does not produce embeddings")
	// ErrUnavailable is a backend that cannot be reached (an upstream
	// refusing connections); clients may retry later.
	ErrUnavailable = errors.New("inference backend unavailable")
)

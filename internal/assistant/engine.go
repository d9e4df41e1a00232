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

// Message is one chat message as the API receives it.
type Message struct {
	Role         string
	Content      string
	Name         string
	FunctionCall *FunctionCall
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

// GenerateRequest is a validated chat request addressed to one engine.
type GenerateRequest struct {
	Model             string // the model's served Name (already resolved)
	Messages          []Message
	Functions         []Function
	Temperature       float64 // <= 0.001 means greedy
	TopP              float64 // 0 or 1 means no nucleus cut
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
	FinishReason string // stop | length
}

// Usage counts tokens of one generation.
type Usage struct {
	PromptTokens          int
	CompletionTokens      int
	PrecachedPromptTokens int
}

// Result is the outcome of Generate.
type Result struct {
	Choices []Choice
	Usage   Usage
}

// Errors an Engine returns; the transports map them to their envelopes.
var (
	ErrContextWindow = errors.New("prompt does not fit the model's context window")
	ErrNoSuchModel   = errors.New("no such model")
	ErrEngineBusy    = errors.New("inference engine is busy")
)

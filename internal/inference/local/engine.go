package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/chattemplate"
	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/tokenizer"
	"partnerapi/internal/jsonmsg"
	"partnerapi/internal/ttft"
)

// Options configure an Engine.
type Options struct {
	// MaxContext caps every model's context window (0: no cap beyond the
	// model's trained context and its manifest).
	MaxContext int
	// Concurrency is how many requests share a model's decode batch
	// (default 10, the assistant's per-client limit for B2B and CORP
	// clients, so that one such client never queues behind itself); their
	// n choices are all sequences of that batch.
	// Further calls wait for a slot, or for their context to end.
	Concurrency int
	// QueueDepth is how many calls may wait for a slot per model (default
	// 64); beyond it Generate returns assistant.ErrEngineBusy at once.
	QueueDepth int
	// PrefixCache is how many finished prompts per model keep their KV cache
	// for prefix reuse (default 4; negative: none). Prefixes shared with
	// sequences still in the batch are reused either way.
	PrefixCache int
	// KVCache is the KV cache element type of every sequence (the zero
	// value: model.DefaultKVType(), int8 where the CPU has its kernels).
	KVCache model.KVType
	// JoinStep is how long a step may take that carries joining prompts'
	// tokens besides the running streams' (or twice a decode-only step,
	// whichever is longer): it sizes the prompt chunks, 16–512 tokens
	// (prefillpacer.go). Zero: DefaultJoinStep; negative: fixed chunks of
	// 16 tokens whatever the steps take.
	JoinStep time.Duration
	// KVPoolIdle is how long a model's engine must have nothing to run
	// before the KV memory its finished requests left for the next ones
	// (model.Model.PooledKVBytes) goes back to the system (zero:
	// DefaultKVPoolIdle; negative: kept until the engine closes).
	KVPoolIdle time.Duration
}

// DefaultKVPoolIdle is Options.KVPoolIdle's default: a burst's KV memory
// is reused by the requests that follow it within a minute.
const DefaultKVPoolIdle = time.Minute

// DefaultJoinStep is Options.JoinStep's default: the running streams get
// at least 40 tokens a second while prompts join.
const DefaultJoinStep = 25 * time.Millisecond

// Manifest is the optional NAME.json beside NAME.gguf.
type Manifest struct {
	Version           string `json:"version"`
	OwnedBy           string `json:"owned_by"`
	Type              string `json:"type"`
	ContextWindow     int    `json:"context_window"`
	ChatTemplate      string `json:"chat_template"` // Jinja source overriding the file's template
	SupportsFunctions bool   `json:"supports_functions"`
}

// Check refuses a manifest the engine would not serve as it says: a type
// other than chat or embedder (empty is chat). A typo such as "embeddings"
// was served as a chat model, refused at /embeddings and listed under a type
// the API's contract does not know; like a manifest that does not parse, it
// now stops serve at start and is an ERROR line in models list. So does a
// version holding '/': the model's id NAME:version is a path segment of
// GET /api/v1/models/{id}, which clients build by appending the id, so the
// model was listed but could not be fetched by its own id.
func (m Manifest) Check() error {
	if strings.Contains(m.Version, "/") {
		return fmt.Errorf("version %q holds '/', so GET /api/v1/models/NAME:version cannot name the model; choose a version without it", jsonmsg.Echo(m.Version))
	}
	switch m.Type {
	case "", TypeChat, assistant.TypeEmbedder:
		return nil
	}
	return fmt.Errorf("type %q is neither %q nor %q", jsonmsg.Echo(m.Type), TypeChat, assistant.TypeEmbedder)
}

// CheckName refuses a model name no request could reach: a model id is
// NAME or NAME:version, so a file named "qwen:7b.gguf" was listed in /models
// as qwen:7b:1.0 and answered No such model under every id (the request's
// "qwen:7b" is model qwen, version 7b), as an --assistant-upstream NAME
// with ':' was before that flag refused it. A path separator cannot be in a
// file name; the other characters a file name may hold are served as today.
func CheckName(name string) error {
	if strings.Contains(name, ":") {
		return fmt.Errorf("model name %q holds ':', which separates a model id's version (NAME:version), so no request can name it; rename the file", jsonmsg.Echo(name))
	}
	return nil
}

// Defaults for models without a manifest.
const (
	DefaultVersion = "1.0"
	DefaultOwnedBy = "partnerapi"
	TypeChat       = "chat"

	defaultConcurrency = 10
	defaultQueueDepth  = 64
	defaultPrefixCache = 4
)

// Engine serves the models of one directory. It implements assistant.Engine.
type Engine struct {
	models map[string]*served
	names  []string
}

var _ assistant.Engine = (*Engine)(nil)

type served struct {
	*Model
	info  assistant.ModelInfo
	sched *scheduler

	// slots admits at most Concurrency requests into the batch; up to
	// queueDepth more wait for one, beyond that Generate fails fast with
	// ErrEngineBusy instead of queueing without bound.
	slots      chan struct{}
	queueDepth int64
	waiting    atomic.Int64

	// ttft is the time from Generate's call to the first token of its
	// answer: queueing, rendering and prefill, what a streaming client waits.
	ttft ttft.Recorder
}

// acquire takes a batch slot, waiting (within ctx) in the bounded queue.
func (s *served) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
		return release, nil
	default:
	}
	if s.waiting.Add(1) > s.queueDepth {
		s.waiting.Add(-1)
		return nil, assistant.ErrEngineBusy
	}
	defer s.waiting.Add(-1)
	select {
	case s.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Open loads every NAME.gguf in modelsDir (not recursively). Tokenizer-only
// files (no tensors) are skipped; any other file that fails to load fails
// Open, so a broken deployment is noticed at start-up.
func Open(modelsDir string, opts Options) (*Engine, error) {
	if fi, err := os.Stat(modelsDir); err != nil {
		return nil, fmt.Errorf("local: models directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("local: models directory %s is not a directory", modelsDir)
	}
	paths, err := filepath.Glob(filepath.Join(modelsDir, "*.gguf"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		// Measured once per process, before the first step: from how much
		// work on a region pays for waking the other cores here.
		kernels.CalibrateSplit()
	}
	e := &Engine{models: map[string]*served{}}
	for _, path := range paths {
		s, err := openServed(path, opts)
		if err != nil {
			e.Close()
			return nil, err
		}
		if s == nil {
			continue
		}
		e.models[s.info.Name] = s
		e.names = append(e.names, s.info.Name)
	}
	return e, nil
}

func openServed(path string, opts Options) (*served, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".gguf")
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("local: %s: %w", path, err)
	}
	man := Manifest{}
	if b, err := os.ReadFile(strings.TrimSuffix(path, ".gguf") + ".json"); err == nil {
		if err := json.Unmarshal(b, &man); err != nil {
			return nil, fmt.Errorf("local: manifest of %s: %w", name, err)
		}
		if err := man.Check(); err != nil {
			return nil, fmt.Errorf("local: manifest of %s: %w", name, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if vocabOnly, err := isVocabOnly(path); err != nil || vocabOnly {
		return nil, err
	}
	m, err := LoadModel(path)
	if err != nil {
		return nil, err
	}
	m.Net.KVCache = opts.KVCache
	// What the engine had to guess about the file is said once, at start:
	// otherwise the model would only seem to answer worse than it should.
	if pre, unknown := m.Tokenizer.UnknownPreTokenizer(); unknown {
		slog.Warn("local: the model's pre-tokenizer is not one the engine knows; its text is split with GPT-2's pattern, so its token ids may differ from those it was trained on",
			"model", name, "tokenizer.ggml.pre", pre)
	}
	if m.TemplateFallback && man.ChatTemplate == "" {
		slog.Warn("local: the model's chat template does not parse; a built-in format is used (set chat_template in the model's manifest to override)", "model", name)
	}
	if man.ChatTemplate != "" {
		if m.Template, err = chattemplate.Parse(man.ChatTemplate); err != nil {
			m.Close()
			return nil, fmt.Errorf("local: manifest of %s: %w", name, err)
		}
	}
	ctxWindow := m.Net.NCtx
	if man.ContextWindow > 0 {
		ctxWindow = min(ctxWindow, man.ContextWindow)
	}
	if opts.MaxContext > 0 {
		ctxWindow = min(ctxWindow, opts.MaxContext)
	}
	info := assistant.ModelInfo{
		Name:              name,
		Version:           cmpOr(man.Version, DefaultVersion),
		OwnedBy:           cmpOr(man.OwnedBy, DefaultOwnedBy),
		Type:              cmpOr(man.Type, TypeChat),
		ContextWindow:     ctxWindow,
		SupportsFunctions: man.SupportsFunctions,
	}
	conc, queue, cache := opts.Concurrency, opts.QueueDepth, opts.PrefixCache
	if conc <= 0 {
		conc = defaultConcurrency
	}
	if queue <= 0 {
		queue = defaultQueueDepth
	}
	if cache == 0 {
		cache = defaultPrefixCache
	}
	idle := opts.KVPoolIdle
	if idle == 0 {
		idle = DefaultKVPoolIdle
	}
	s := newScheduler(m, cache, opts.JoinStep, idle)
	return &served{Model: m, info: info, sched: s,
		slots: make(chan struct{}, conc), queueDepth: int64(queue)}, nil
}

// isVocabOnly reports whether the GGUF at path has no tensors (a
// tokenizer-only file), at the cost of one extra header parse.
func isVocabOnly(path string) (bool, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return len(f.Tensors) == 0, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Close releases every model.
func (e *Engine) Close() error {
	var errs []error
	for _, s := range e.models {
		s.sched.close()
		errs = append(errs, s.Close())
	}
	e.models = nil
	return errors.Join(errs...)
}

// Models lists the served models in name order.
func (e *Engine) Models(ctx context.Context) ([]assistant.ModelInfo, error) {
	out := make([]assistant.ModelInfo, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, e.models[n].info)
	}
	return out, nil
}

// Model returns a served model by name (for tools and tests).
func (e *Engine) Model(name string) (*Model, bool) {
	s, ok := e.models[name]
	if !ok {
		return nil, false
	}
	return s.Model, true
}

// CountTokens counts text's tokens without BOS/EOS and without parsing
// special-token text.
func (e *Engine) CountTokens(ctx context.Context, name, text string) (int, error) {
	s, ok := e.models[name]
	if !ok {
		return 0, assistant.ErrNoSuchModel
	}
	return len(s.Tokenizer.Encode(text, false, false)), nil
}

// prompt renders messages (and the functions offered, as the template's
// "tools") with the model's template and tokenizes the result.
func (s *served) prompt(msgs []assistant.Message, functions []assistant.Function) ([]int, error) {
	cm := make([]chattemplate.Message, 0, len(msgs))
	for _, m := range msgs {
		// The provider's own roles mean to the model what they mean to an
		// upstream one; templates refuse or skip roles they do not know.
		role, keep := assistant.ModelRole(m.Role)
		if !keep {
			continue
		}
		// Function results travel as role "function" in the API; current
		// templates (Qwen2.5, Llama 3.1, Hermes) call that role "tool".
		if role == "function" {
			role = "tool"
		}
		c := chattemplate.Message{Role: role, Content: m.Content, Name: m.Name}
		if m.FunctionCall != nil {
			c.ToolCall = &chattemplate.ToolCall{Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}
		}
		cm = append(cm, c)
	}
	tools := make([]chattemplate.Tool, len(functions))
	for i, f := range functions {
		tools[i] = chattemplate.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters}
	}
	return encodePrompt(s.Tokenizer, s.Template, cm, tools)
}

// encodePrompt renders a conversation with tpl and tokenizes it with tok.
// The template's text is tokenized with control-token parsing and the
// request's text without it (chattemplate.RenderPieces: contents, names,
// function calls' arguments, the functions' names, descriptions and
// parameters), so that a user's "<|end|>" stays text instead of ending
// their turn; a template that writes the BOS token itself suppresses the
// tokenizer's own, so the prompt never starts with two.
func encodePrompt(tok *tokenizer.Tokenizer, tpl *chattemplate.Template, cm []chattemplate.Message, tools []chattemplate.Tool) ([]int, error) {
	bos := ""
	if tok.BOS() >= 0 {
		bos = tok.TokenText(tok.BOS())
	}
	eos := ""
	if tok.EOS() >= 0 {
		eos = tok.TokenText(tok.EOS())
	}
	opts := chattemplate.Options{BOSToken: bos, EOSToken: eos, AddGenerationPrompt: true, Tools: tools, ControlTokens: tok.ControlTexts()}
	// A template that leaves the system message out (Phi-3's) would lose
	// the client's instructions without a word: they open the first user
	// message instead, as for templates that refuse a system message.
	if merged, ok := chattemplate.FoldSystem(cm); ok && tpl.DropsSystem() {
		cm = merged
	}
	pieces, err := tpl.RenderPieces(cm, opts)
	// A conversation the template renders but cannot keep the request's
	// text apart in is not one it refuses for its system message.
	refused := errors.Is(err, chattemplate.ErrTemplate) && !errors.Is(err, chattemplate.ErrUnprotectable)
	if merged, ok := chattemplate.FoldSystem(cm); ok && refused {
		// Some templates (Mistral v0.1 and v0.2) refuse a system message;
		// the client's instructions then open the first user message, as
		// those models' own documentation suggests, rather than failing the
		// request.
		// When that fails too, the first refusal, of the messages as the
		// client sent them, is the one to report.
		if p, err2 := tpl.RenderPieces(merged, opts); err2 == nil {
			pieces, err = p, nil
		}
	}
	if err != nil {
		// The template parsed when the model loaded, so what fails now is
		// these messages: the client's to fix (reference §4, 422).
		reason := "the model's chat template cannot render these messages"
		var raised *chattemplate.RaisedError
		switch {
		case errors.As(err, &raised):
			reason = raised.Message
		case errors.Is(err, chattemplate.ErrUnprotectable):
			// Rendered, this prompt could turn the messages' text into
			// control tokens: refused rather than run unprotected.
			reason = "the model's chat template rewrites these messages' text in a way that cannot keep it apart from its control tokens"
		}
		return nil, &assistant.TemplateError{Reason: reason, Err: err}
	}
	segs := make([]tokenizer.Segment, len(pieces))
	var text strings.Builder
	for i, p := range pieces {
		// Request text is user input: control-token spellings in it stay
		// text. The plain-text fallback is all message text.
		segs[i] = tokenizer.Segment{Text: p.Text, ParseSpecial: !p.User}
		text.WriteString(p.Text)
	}
	addSpecial := tpl.IsPlainText() || !(bos != "" && strings.HasPrefix(text.String(), bos))
	return tok.EncodeSegments(segs, addSpecial), nil
}

// Generate implements assistant.Engine.
func (e *Engine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	start := time.Now()
	s, ok := e.models[req.Model]
	if !ok {
		return assistant.Result{}, assistant.ErrNoSuchModel
	}
	prompt, err := s.prompt(req.Messages, req.Functions)
	if err != nil {
		return assistant.Result{}, err
	}
	room := s.info.ContextWindow - len(prompt)
	if room < 1 {
		return assistant.Result{}, assistant.ErrContextWindow
	}
	maxTokens := room
	if req.MaxTokens > 0 {
		maxTokens = min(req.MaxTokens, room)
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return assistant.Result{}, err
	}
	defer release()
	return s.run(ctx, start, prompt, GenerateParams{
		Temperature:       req.Temperature,
		TopP:              req.TopP,
		TopPSet:           req.TopPSet,
		RepetitionPenalty: req.RepetitionPenalty,
		Seed:              req.Seed,
		MaxTokens:         maxTokens,
		N:                 max(req.N, 1),
		MaxContext:        s.info.ContextWindow,
	}, emit)
}

// Stats reports every model's scheduler state, in name order: what is in the
// batch, the KV memory it holds and the prefix cache.
func (e *Engine) Stats() []Stats {
	out := make([]Stats, 0, len(e.names))
	for _, n := range e.names {
		st := e.models[n].sched.snapshot()
		st.Model = n
		st.QueuedRequests = int(e.models[n].waiting.Load())
		st.TimeToFirstToken = e.models[n].ttft.Snapshot()
		out = append(out, st)
	}
	return out
}

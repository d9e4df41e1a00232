package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/quanttest"
	"partnerapi/internal/testenv"
)

const storiesContinuation = ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."

// modelsDir makes a temporary models directory holding a symlink to the
// shared stories260K file (never a copy) and an optional manifest.
func modelsDir(t *testing.T, manifest string) string {
	t.Helper()
	src := testenv.Model(t, "stories260K.gguf")
	if testWeights != gguf.F32 {
		src = quanttest.File(t, src, testWeights)
	}
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	// A tokenizer-only file is skipped, not served.
	if err := os.Symlink(testenv.Model(t, "vocab/ggml-vocab-phi-3.gguf"), filepath.Join(dir, "phi3-vocab.gguf")); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		if err := os.WriteFile(filepath.Join(dir, "stories260K.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func openEngine(t *testing.T, manifest string, opts Options) *Engine {
	t.Helper()
	if opts.KVCache == model.KVDefault {
		opts.KVCache = testKVCache
	}
	e, err := Open(modelsDir(t, manifest), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func userMessage(s string) []assistant.Message {
	return []assistant.Message{{Role: "user", Content: s}}
}

func TestModelsAndManifest(t *testing.T) {
	e := openEngine(t, "", Options{})
	models, _ := e.Models(context.Background())
	want := assistant.ModelInfo{Name: "stories260K", Version: "1.0", OwnedBy: "partnerapi", Type: "chat", ContextWindow: 2048}
	if len(models) != 1 || models[0] != want {
		t.Fatalf("models %+v", models)
	}
	e = openEngine(t, `{"version":"2.1","owned_by":"team","context_window":512,"supports_functions":true}`, Options{})
	models, _ = e.Models(context.Background())
	want = assistant.ModelInfo{Name: "stories260K", Version: "2.1", OwnedBy: "team", Type: "chat", ContextWindow: 512, SupportsFunctions: true}
	if models[0] != want {
		t.Fatalf("with manifest %+v", models[0])
	}
	if _, err := Open(modelsDir(t, `{"version":`), Options{}); err == nil {
		t.Error("broken manifest accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("missing models directory accepted")
	}
	empty, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if models, _ := empty.Models(context.Background()); len(models) != 0 {
		t.Errorf("empty directory serves %v", models)
	}
}

func TestCountTokens(t *testing.T) {
	e := openEngine(t, "", Options{})
	n, err := e.CountTokens(context.Background(), "stories260K", "Once upon a time")
	if err != nil || n != 4 {
		t.Fatalf("count %d, %v (want 4: no BOS)", n, err)
	}
	if _, err := e.CountTokens(context.Background(), "nope", "x"); !errors.Is(err, assistant.ErrNoSuchModel) {
		t.Errorf("unknown model: %v", err)
	}
}

func TestGenerateGreedyMatchesReference(t *testing.T) {
	e := openEngine(t, "", Options{})
	var streamed strings.Builder
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{
		Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 40, N: 1,
	}, func(d assistant.Delta) error {
		if d.Index != 0 || !utf8.ValidString(d.Text) || d.Text == "" {
			t.Errorf("bad delta %+v", d)
		}
		streamed.WriteString(d.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 1 || res.Choices[0].Text != storiesContinuation || res.Choices[0].FinishReason != "length" {
		t.Fatalf("result %+v", res)
	}
	if streamed.String() != res.Choices[0].Text {
		t.Errorf("streamed %q", streamed.String())
	}
	if res.Usage != (assistant.Usage{PromptTokens: 5, CompletionTokens: 40}) {
		t.Errorf("usage %+v", res.Usage)
	}
}

// TestGreedyWithAPIDefaults runs temperature 0 with the parameters the API
// fills in when a client gives only the temperature (repetition penalty
// 1.07, top_p 0.47): greedy must still be the reference argmax, for long
// enough that the prompt's and the continuation's repeated tokens would
// have been penalised ("a", "ball", "Lily", "play" recur).
func TestGreedyWithAPIDefaults(t *testing.T) {
	// The reference continuation of "Once upon a time" to 64 tokens
	// (shared/models/README.md, llama.cpp's greedy decoding).
	const want64 = storiesContinuation + " She wanted to play with it, but it was too high.\nLily's mom said"
	e := openEngine(t, "", Options{})
	tests := []struct {
		name string
		req  assistant.GenerateRequest
	}{
		{"API defaults", assistant.GenerateRequest{Temperature: 0, TopP: assistant.DefaultTopP, RepetitionPenalty: assistant.DefaultRepetitionPenalty}},
		{"strong penalty", assistant.GenerateRequest{Temperature: 0, TopP: assistant.DefaultTopP, RepetitionPenalty: 1.5}},
		{"just under the greedy threshold", assistant.GenerateRequest{Temperature: 0.000999, RepetitionPenalty: assistant.DefaultRepetitionPenalty, N: 2}},
	}
	// The ids themselves, through the model's own generator with the same
	// parameters: shared/models/README.md's 40 reference ids.
	m, _ := e.Model("stories260K")
	refIDs := []int{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292,
		411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426}
	comps, err := m.Generate(context.Background(), []int{1, 403, 407, 261, 378}, GenerateParams{MaxTokens: 40, N: 1,
		Temperature: 0, TopP: assistant.DefaultTopP, RepetitionPenalty: assistant.DefaultRepetitionPenalty}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(comps[0].Tokens, refIDs) {
		t.Errorf("ids %v\nwant %v", comps[0].Tokens, refIDs)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Model, req.Messages, req.MaxTokens, req.Seed = "stories260K", userMessage("Once upon a time"), 64, 5
			res, err := e.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Choices {
				if c.Text != want64 {
					t.Errorf("choice %d: got  %q\nwant %q", c.Index, c.Text, want64)
				}
			}
		})
	}
}

// TestExplicitTopPZero checks that a client's top_p 0 reaches the sampler
// as llama.cpp's "most probable token only": even at a high temperature the
// choices are the greedy reference, while the zero value still samples.
func TestExplicitTopPZero(t *testing.T) {
	e := openEngine(t, "", Options{})
	tests := []struct {
		name       string
		topPSet    bool
		wantGreedy bool
	}{
		{"explicit 0", true, true},
		{"unset", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"),
				MaxTokens: 40, N: 3, Temperature: 1.8, TopP: 0, TopPSet: tc.topPSet, RepetitionPenalty: 1, Seed: 11}, nil)
			if err != nil {
				t.Fatal(err)
			}
			greedy := 0
			for _, c := range res.Choices {
				if c.Text == storiesContinuation {
					greedy++
				}
			}
			if tc.wantGreedy && greedy != len(res.Choices) || !tc.wantGreedy && greedy == len(res.Choices) {
				t.Errorf("%d of %d choices are the greedy continuation: %+v", greedy, len(res.Choices), res.Choices)
			}
		})
	}
}

func TestGenerateChoicesAreSeededAndIndependent(t *testing.T) {
	e := openEngine(t, "", Options{})
	req := assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Lily and Tom went to the"),
		MaxTokens: 20, N: 3, Temperature: 1, TopP: 0.95, Seed: 42}
	run := func() assistant.Result {
		res, err := e.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	if len(a.Choices) != 3 {
		t.Fatalf("%d choices", len(a.Choices))
	}
	for i := range a.Choices {
		if a.Choices[i] != b.Choices[i] {
			t.Errorf("choice %d differs between runs with one seed: %q vs %q", i, a.Choices[i].Text, b.Choices[i].Text)
		}
	}
	if a.Choices[0].Text == a.Choices[1].Text && a.Choices[1].Text == a.Choices[2].Text {
		t.Errorf("three sampled choices are identical: %q", a.Choices[0].Text)
	}
	if a.Usage.PromptTokens != 9 || a.Usage.CompletionTokens < 3 || a.Usage.CompletionTokens > 60 {
		t.Errorf("usage %+v", a.Usage)
	}
}

func TestGenerateContextWindow(t *testing.T) {
	e := openEngine(t, `{"context_window":8}`, Options{})
	// 5 prompt tokens in a window of 8: max_tokens 100 is clamped to 3.
	res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.CompletionTokens != 3 || res.Choices[0].FinishReason != "length" {
		t.Errorf("clamped result %+v", res)
	}
	// 9 prompt tokens do not fit.
	_, err = e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Lily and Tom went to the")}, nil)
	if !errors.Is(err, assistant.ErrContextWindow) {
		t.Errorf("over-long prompt: %v", err)
	}
	_, err = e.Generate(context.Background(), assistant.GenerateRequest{Model: "nope", Messages: userMessage("x")}, nil)
	if !errors.Is(err, assistant.ErrNoSuchModel) {
		t.Errorf("unknown model: %v", err)
	}
}

func TestGenerateStopsOnCancelAndEmitError(t *testing.T) {
	e := openEngine(t, "", Options{})
	req := assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 200}
	ctx, cancel := context.WithCancel(context.Background())
	deltas := 0
	_, err := e.Generate(ctx, req, func(assistant.Delta) error {
		deltas++
		if deltas == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || deltas != 2 {
		t.Errorf("cancel: err %v after %d deltas", err, deltas)
	}
	boom := errors.New("client gone")
	deltas = 0
	_, err = e.Generate(context.Background(), req, func(assistant.Delta) error { deltas++; return boom })
	if !errors.Is(err, boom) || deltas != 1 {
		t.Errorf("emit error: err %v after %d deltas", err, deltas)
	}
}

func TestGenerateWaitsForSlotWithinContext(t *testing.T) {
	e := openEngine(t, "", Options{Concurrency: 1})
	req := assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 5}
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		first := true
		_, err := e.Generate(context.Background(), req, func(assistant.Delta) error {
			if first {
				first = false
				close(started)
				<-release
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.Generate(ctx, req, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second call while the slot is held: %v", err)
	}
	close(release)
	wg.Wait()
	if _, err := e.Generate(context.Background(), req, nil); err != nil {
		t.Errorf("after release: %v", err)
	}
}

func TestEnginesShareWeights(t *testing.T) {
	dir := modelsDir(t, "")
	a, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ma, _ := a.Model("stories260K")
	mb, _ := b.Model("stories260K")
	if &ma.Net.TokenEmbd.Data[0] != &mb.Net.TokenEmbd.Data[0] {
		t.Error("two engines on one file map the weights twice")
	}
}

func TestManifestTemplateAndBOS(t *testing.T) {
	for _, tc := range []struct {
		name, template string
		promptTokens   int
	}{
		// The template writes BOS itself: the tokenizer must not add another.
		{"template with bos", `{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}`, 5},
		// The BOS comes after a block tag on its own line, as in templates
		// laid out over several lines: trim_blocks drops that newline, so the
		// text still starts with BOS and the tokenizer adds no second one.
		{"bos after a block line", "{% set greeting = 'hi' %}\n{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}", 5},
		// Without it the tokenizer's BOS is added as usual.
		{"template without bos", `{% for m in messages %}{{ m['content'] }}{% endfor %}`, 5},
		// Two messages concatenated by the template.
		{"two messages", `{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest, _ := json.Marshal(Manifest{ChatTemplate: tc.template})
			e := openEngine(t, string(manifest), Options{})
			msgs := userMessage("Once upon a time")
			want := tc.promptTokens
			if want < 0 {
				msgs = []assistant.Message{{Role: "system", Content: "Once upon a time"}, {Role: "user", Content: " there was"}}
				n, _ := e.CountTokens(context.Background(), "stories260K", "Once upon a time there was")
				want = 1 + n
			}
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: msgs, MaxTokens: 3}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Usage.PromptTokens != want {
				t.Errorf("prompt tokens %d, want %d", res.Usage.PromptTokens, want)
			}
		})
	}
	if _, err := Open(modelsDir(t, `{"chat_template":"{% for %}"}`), Options{}); err == nil {
		t.Error("broken template in manifest accepted")
	}
}

func TestConcurrentGenerations(t *testing.T) {
	manifest, _ := json.Marshal(Manifest{ChatTemplate: `{{ bos_token }}{% for m in messages %}{{ m['content'] | trim }}{% endfor %}`})
	e := openEngine(t, string(manifest), Options{Concurrency: 2})
	var wg sync.WaitGroup
	texts := make([]string, 4)
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 40, N: 2}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			texts[i] = res.Choices[1].Text
		}()
	}
	wg.Wait()
	for i, s := range texts {
		if s != storiesContinuation {
			t.Errorf("generation %d: %q", i, s)
		}
	}
}

func TestPromptPassesFunctionsToTemplate(t *testing.T) {
	tpl := `{% for t in tools %}{{ t.function.name }};{% endfor %}{% for m in messages %}{{ m.role }}:{{ m.content }}{% if m.tool_calls %}{{ m.tool_calls[0].function.name }}({{ m.tool_calls[0].function.arguments.city }}){% endif %}|{% endfor %}`
	manifest, _ := json.Marshal(Manifest{ChatTemplate: tpl})
	e := openEngine(t, string(manifest), Options{})
	s := e.models["stories260K"]
	ids, err := s.prompt([]assistant.Message{
		{Role: "user", Content: "weather"},
		{Role: "assistant", FunctionCall: &assistant.FunctionCall{Name: "get", Arguments: []byte(`{"city":"Oslo"}`)}},
		{Role: "function", Name: "get", Content: "cold"},
	}, []assistant.Function{{Name: "get"}, {Name: "set"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Tokenizer.Decode(ids), "get;set;user:weather|assistant:get(Oslo)|tool:cold|"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
}

func TestPromptPrefixReuse(t *testing.T) {
	e := openEngine(t, "", Options{})
	gen := func(e *Engine, text string) assistant.Result {
		t.Helper()
		res, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage(text), MaxTokens: 30}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := gen(e, "Once upon a time")
	if first.Usage.PrecachedPromptTokens != 0 {
		t.Errorf("cold start reused %d tokens", first.Usage.PrecachedPromptTokens)
	}
	// The same prompt again: everything but the last prompt token is reused
	// (its logits are needed), and greedy output is unchanged.
	again := gen(e, "Once upon a time")
	if again.Usage.PrecachedPromptTokens != 4 || again.Choices[0] != first.Choices[0] {
		t.Errorf("repeat: precached %d, %q", again.Usage.PrecachedPromptTokens, again.Choices[0].Text)
	}
	// A longer prompt sharing the 5-token prefix reuses it and produces what
	// a fresh engine produces.
	longer := gen(e, "Once upon a time there")
	if longer.Usage.PrecachedPromptTokens != 5 {
		t.Errorf("longer prompt: precached %d, want 5", longer.Usage.PrecachedPromptTokens)
	}
	fresh := gen(openEngine(t, "", Options{}), "Once upon a time there")
	if longer.Choices[0] != fresh.Choices[0] {
		t.Errorf("reused cache changed the output: %q vs %q", longer.Choices[0].Text, fresh.Choices[0].Text)
	}
	// An unrelated prompt shares only BOS.
	if other := gen(e, "Lily and Tom went to the"); other.Usage.PrecachedPromptTokens != 1 {
		t.Errorf("unrelated prompt: precached %d, want 1 (BOS)", other.Usage.PrecachedPromptTokens)
	}
}

// A manifest's type is chat or embedder: any other (a typo, another case, a
// type the contract lists but this engine does not serve) stops Open, as a
// manifest that does not parse does, instead of the model being served as a
// chat model under a type the API does not know.
func TestManifestTypeIsChatOrEmbedder(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want string // the model's type, or "" when Open must refuse it
	}{
		{"", "chat"},
		{"chat", "chat"},
		{"embedder", "embedder"},
		{"embeddings", ""},
		{"Embedder", ""},
		{"aicheck", ""},
		{"filter", ""},
	} {
		e, err := Open(modelsDir(t, `{"type":"`+tc.typ+`"}`), Options{})
		if tc.want == "" {
			if err == nil {
				e.Close()
				t.Errorf("type %q: served", tc.typ)
			} else if !strings.Contains(err.Error(), "stories260K") || !strings.Contains(err.Error(), `"`+tc.typ+`"`) {
				t.Errorf("type %q: the error names neither the model nor the type: %v", tc.typ, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("type %q: %v", tc.typ, err)
			continue
		}
		models, _ := e.Models(context.Background())
		e.Close()
		if len(models) != 1 || models[0].Type != tc.want {
			t.Errorf("type %q: served as %+v", tc.typ, models)
		}
	}
}

// A manifest version holding '/' stops Open, naming the model and the
// version, as a bad type does: the id NAME:version could not be fetched
// from GET /api/v1/models/{id}, one path segment. Other versions serve.
func TestManifestVersionWithSlashIsRefused(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"", true},
		{"2.0.28.2", true},
		{"2025-11:beta", true},
		{"2.0/rc1", false},
		{"/", false},
	} {
		e, err := Open(modelsDir(t, `{"version":"`+tc.version+`"}`), Options{})
		if !tc.ok {
			if err == nil {
				e.Close()
				t.Errorf("version %q: served", tc.version)
			} else if !strings.Contains(err.Error(), "stories260K") || !strings.Contains(err.Error(), `"`+tc.version+`"`) {
				t.Errorf("version %q: the error names neither the model nor the version: %v", tc.version, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("version %q: %v", tc.version, err)
			continue
		}
		e.Close()
	}
}

// A model file whose name holds ':' stops Open, naming the file: its id
// would be listed and answer No such model under every spelling of it.
func TestModelNameWithColonIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "tiny:7b.gguf")); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, Options{})
	if err == nil {
		models, _ := e.Models(context.Background())
		e.Close()
		t.Fatalf("tiny:7b.gguf served as %+v", models)
	}
	if !strings.Contains(err.Error(), "tiny:7b.gguf") || !strings.Contains(err.Error(), "rename") {
		t.Errorf("the error does not name the file or the remedy: %v", err)
	}
}

package assistant

import (
	"context"
	"slices"
	"testing"
)

// recordingEngine answers with the model name each call reached it with, so
// a test sees what name an alias was turned into.
type recordingEngine struct {
	owner  string
	models []string
}

func (r recordingEngine) Models(context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	for _, m := range r.models {
		out = append(out, ModelInfo{Name: m, Version: "v-" + m, OwnedBy: r.owner, Type: TypeChat})
	}
	return out, nil
}

func (r recordingEngine) CountTokens(_ context.Context, model, _ string) (int, error) {
	if !slices.Contains(r.models, model) {
		return 0, ErrNoSuchModel
	}
	return len(model), nil
}

func (r recordingEngine) Generate(_ context.Context, req GenerateRequest, _ func(Delta) error) (Result, error) {
	if !slices.Contains(r.models, req.Model) {
		return Result{}, ErrNoSuchModel
	}
	return Result{Choices: []Choice{{Text: r.owner + "/" + req.Model}}}, nil
}

func (r recordingEngine) NativeFunctionCalls(model string) bool { return model == "qwen" }

func aliasedEngine() *MultiEngine {
	return &MultiEngine{
		Default: recordingEngine{"local", []string{"stories", "qwen", "GigaChat-Pro"}},
		Routes:  map[string]Engine{"big": recordingEngine{"up", []string{"big"}}},
		Aliases: map[string]string{"GigaChat": "stories", "GigaChat-Max": "big", "GigaChat-Pro": "qwen", "Ghost": "absent"},
	}
}

func TestMultiEngineAliasesReachTheirModel(t *testing.T) {
	m := aliasedEngine()
	ctx := context.Background()
	for _, tc := range []struct{ asked, want, model string }{
		{"GigaChat", "local/stories", "stories"},
		{"GigaChat-Max", "up/big", "big"},       // an alias of a routed model goes to its route
		{"GigaChat-Pro", "local/qwen", "qwen"},  // an alias wins over a model of its own name
		{"stories", "local/stories", "stories"}, // the model keeps its own name too
	} {
		r, err := m.Generate(ctx, GenerateRequest{Model: tc.asked}, nil)
		if err != nil || r.Choices[0].Text != tc.want {
			t.Errorf("Generate(%s) = %+v, %v; want %s", tc.asked, r, err, tc.want)
		}
		// The engine counts with the model's own name's tokenizer: the
		// recording engine answers the length of the name it was given.
		if n, err := m.CountTokens(ctx, tc.asked, "x"); err != nil || n != len(tc.model) {
			t.Errorf("CountTokens(%s) = %d, %v; want %d (model %s)", tc.asked, n, err, len(tc.model), tc.model)
		}
	}
	if !m.NativeFunctionCalls("GigaChat-Pro") || m.NativeFunctionCalls("GigaChat") {
		t.Error("NativeFunctionCalls does not follow the alias to its model")
	}
}

func TestMultiEngineListsAliasesAsTheirModels(t *testing.T) {
	m := aliasedEngine()
	ms, err := m.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ModelInfo{}
	var names []string
	for _, mi := range ms {
		got[mi.Name] = mi
		names = append(names, mi.Name)
	}
	// GigaChat-Pro the model is shadowed by GigaChat-Pro the alias, and
	// Ghost names no served model, so it is not listed.
	want := []string{"stories", "qwen", "big", "GigaChat", "GigaChat-Max", "GigaChat-Pro"}
	if !slices.Equal(names, want) {
		t.Fatalf("models %v, want %v", names, want)
	}
	for alias, model := range map[string]string{"GigaChat": "stories", "GigaChat-Max": "big", "GigaChat-Pro": "qwen"} {
		if got[alias].Version != "v-"+model || got[alias].OwnedBy != got[model].OwnedBy {
			t.Errorf("%s listed as %+v, want its model %s's description %+v", alias, got[alias], model, got[model])
		}
	}
	one, err := m.ModelsOf(context.Background(), "GigaChat-Max")
	if err != nil || len(one) != 1 || one[0].Name != "GigaChat-Max" || one[0].OwnedBy != "up" {
		t.Errorf("ModelsOf(GigaChat-Max) = %+v, %v", one, err)
	}
	if none, err := m.ModelsOf(context.Background(), "Ghost"); err != nil || len(none) != 0 {
		t.Errorf("ModelsOf(Ghost) = %+v, %v; want nothing", none, err)
	}
}

func TestServiceResolvesAnAlias(t *testing.T) {
	s := &Service{engine: aliasedEngine()}
	for _, id := range []string{"GigaChat", "GigaChat:latest", "GigaChat:v-stories"} {
		mi, err := s.ResolveModel(context.Background(), id)
		if err != nil || mi.Name != "GigaChat" || mi.Version != "v-stories" {
			t.Errorf("ResolveModel(%s) = %+v, %v", id, mi, err)
		}
	}
	if _, err := s.ResolveModel(context.Background(), "Ghost"); err != ErrNoSuchModel {
		t.Errorf("ResolveModel(Ghost) = %v, want ErrNoSuchModel", err)
	}
}

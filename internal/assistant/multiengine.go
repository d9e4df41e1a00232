package assistant

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// MultiEngine routes each model to the engine that serves it: Routes by model
// name (e.g. an upstream server), Default for every other model (the local
// engine). The service takes one Engine, so routing lives here rather than in it.
type MultiEngine struct {
	Default Engine
	Routes  map[string]Engine
	// Aliases serve a model under another name as well (alias → model).
	// Real clients ask for the provider's names: the npm client, LangChain
	// and the Python SDK send "GigaChat" when told no model, and an alias
	// lets them run unmodified against whatever model is served. An alias
	// names a model, never another alias, and wins over a model of its own
	// name. Each call reaches the engine with the model's own name, and the
	// service (usage, bills, the answer's model field) sees the alias.
	Aliases map[string]string
}

// target is the model a name stands for: an alias's model, else the name.
func (m *MultiEngine) target(model string) string {
	if t, ok := m.Aliases[model]; ok {
		return t
	}
	return model
}

func (m *MultiEngine) pick(model string) Engine {
	if e, ok := m.Routes[model]; ok {
		return e
	}
	return m.Default
}

// Models lists the default engine's models, except names shadowed by a route,
// followed by each routed model as its engine describes it. The routed
// engines are asked at once: each may wait for its server up to its own
// model-list timeout, and one after another a listing would wait for the
// sum of them.
func (m *MultiEngine) Models(ctx context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	if m.Default != nil {
		ms, err := m.Default.Models(ctx)
		if err != nil {
			return nil, err
		}
		for _, mi := range ms {
			if _, routed := m.Routes[mi.Name]; !routed {
				out = append(out, mi)
			}
		}
	}
	names := slices.Sorted(maps.Keys(m.Routes))
	infos := make([]ModelInfo, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { infos[i] = m.routedInfo(ctx, name) })
	}
	wg.Wait()
	return m.withAliases(append(out, infos...)), nil
}

// withAliases lists each alias as its model's twin under the alias's name,
// in place of a model of that name; an alias whose model is not listed is
// left out, as a chat with it would find no model.
func (m *MultiEngine) withAliases(models []ModelInfo) []ModelInfo {
	if len(m.Aliases) == 0 {
		return models
	}
	out := make([]ModelInfo, 0, len(models)+len(m.Aliases))
	for _, mi := range models {
		if _, shadowed := m.Aliases[mi.Name]; !shadowed {
			out = append(out, mi)
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(m.Aliases)) {
		for _, mi := range models {
			if mi.Name == m.Aliases[alias] {
				mi.Name = alias
				out = append(out, mi)
				break
			}
		}
	}
	return out
}

// ModelsOf lists what the engine serving name says of its models: the
// routed model alone, or the default engine's. Resolving a model asks only
// its own engine, so a chat with a local model does not wait for an
// upstream server that hangs.
func (m *MultiEngine) ModelsOf(ctx context.Context, name string) ([]ModelInfo, error) {
	if t, ok := m.Aliases[name]; ok {
		ms, err := m.modelsOf(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, mi := range ms {
			if mi.Name == t {
				mi.Name = name
				return []ModelInfo{mi}, nil
			}
		}
		return nil, nil
	}
	return m.modelsOf(ctx, name)
}

func (m *MultiEngine) modelsOf(ctx context.Context, name string) ([]ModelInfo, error) {
	if _, routed := m.Routes[name]; routed {
		return []ModelInfo{m.routedInfo(ctx, name)}, nil
	}
	if m.Default == nil {
		return nil, nil
	}
	return m.Default.Models(ctx)
}

// routedInfo describes a routed model. It is listed even while its server
// is unreachable or does not list it: it is configured, and a chat with it
// reports the failure where it happens instead of failing every /models.
func (m *MultiEngine) routedInfo(ctx context.Context, name string) ModelInfo {
	e := m.Routes[name]
	info := ModelInfo{Name: name, Version: "1.0", Type: TypeChat}
	if d, ok := e.(interface{ ModelInfo(string) ModelInfo }); ok {
		info = d.ModelInfo(name)
	}
	if ms, err := e.Models(ctx); err == nil {
		for _, mi := range ms {
			if mi.Name == name {
				info = mi
			}
		}
	}
	return info
}

// NativeFunctionCalls asks the engine serving model.
func (m *MultiEngine) NativeFunctionCalls(model string) bool {
	model = m.target(model)
	n, ok := m.pick(model).(NativeFunctionCaller)
	return ok && n.NativeFunctionCalls(model)
}

// Embed runs on the engine serving model, if it embeds.
func (m *MultiEngine) Embed(ctx context.Context, model string, inputs []string) ([]Embedding, error) {
	model = m.target(model)
	e, ok := m.pick(model).(Embedder)
	if !ok {
		return nil, ErrNotEmbedder
	}
	return e.Embed(ctx, model, inputs)
}

// Surprisal runs on the engine serving model, if it scores text.
func (m *MultiEngine) Surprisal(ctx context.Context, model, text string) ([]TokenSurprisal, error) {
	model = m.target(model)
	e, ok := m.pick(model).(Scorer)
	if !ok {
		return nil, ErrNoAICheck
	}
	return e.Surprisal(ctx, model, text)
}

// CountTokens uses the tokenizer of the engine serving model.
func (m *MultiEngine) CountTokens(ctx context.Context, model, text string) (int, error) {
	model = m.target(model)
	e := m.pick(model)
	if e == nil {
		return 0, ErrNoSuchModel
	}
	return e.CountTokens(ctx, model, text)
}

// Generate runs on the engine serving req.Model.
func (m *MultiEngine) Generate(ctx context.Context, req GenerateRequest, emit func(Delta) error) (Result, error) {
	req.Model = m.target(req.Model)
	e := m.pick(req.Model)
	if e == nil {
		return Result{}, ErrNoSuchModel
	}
	return e.Generate(ctx, req, emit)
}

package main

import (
	"fmt"
	"slices"
	"strings"

	"partnerapi/internal/assistant"
)

// aliasFlag collects --assistant-model-alias ALIAS=MODEL: the model MODEL
// is served under the name ALIAS as well (assistant.MultiEngine.Aliases).
// The provider's clients ask for its own model names when told none (the
// npm client, LangChain and the Python SDK send "GigaChat"), so an alias
// lets them run unmodified against whatever model this server has.
type aliasFlag map[string]string

func (f *aliasFlag) String() string {
	var parts []string
	for alias, model := range *f {
		parts = append(parts, alias+"="+model)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (f *aliasFlag) Set(v string) error {
	// The environment form (PARTNERAPI_ASSISTANT_MODEL_ALIAS) is one
	// value, so several aliases there are separated by commas or spaces,
	// which no model name holds.
	if fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }); len(fields) > 1 {
		for _, one := range fields {
			if err := f.Set(one); err != nil {
				return err
			}
		}
		return nil
	}
	v = strings.TrimSpace(v)
	alias, model, ok := strings.Cut(v, "=")
	// A model id is NAME or NAME:VERSION, so a colon in either would make
	// an id that means something else.
	if !ok || alias == "" || model == "" || strings.ContainsAny(alias, ":/=") || strings.ContainsAny(model, ":/=") {
		return fmt.Errorf("want ALIAS=MODEL (e.g. GigaChat=stories260K), got %q", v)
	}
	if *f == nil {
		*f = aliasFlag{}
	}
	if prev, seen := (*f)[alias]; seen && prev != model {
		return fmt.Errorf("%q: %s is already an alias of %s", v, alias, prev)
	}
	(*f)[alias] = model
	return nil
}

// check refuses an alias whose model is not served (served: the local
// engine's models and the upstream names) or is itself an alias: either
// would answer every request for the alias with "No such model", which a
// typo in a deployment's settings should not wait for a client to find.
// It also refuses an alias that is the name of a served model: the alias
// took the name over, so that model was neither listed nor reachable, its
// requests answered by the alias's model (Embeddings=stories260K hid the
// Embeddings embedder and answered /embeddings 422).
func (f aliasFlag) check(served []string) error {
	aliases := make([]string, 0, len(f))
	for alias := range f {
		aliases = append(aliases, alias)
	}
	slices.Sort(aliases)
	for _, alias := range aliases {
		model := f[alias]
		if slices.Contains(served, alias) {
			return fmt.Errorf("--assistant-model-alias %s=%s: %s is a served model, which the alias would hide; name the alias otherwise", alias, model, alias)
		}
		if _, chained := f[model]; chained {
			return fmt.Errorf("--assistant-model-alias %s=%s: %s is an alias itself; name the model", alias, model, model)
		}
		if !slices.Contains(served, model) {
			return fmt.Errorf("--assistant-model-alias %s=%s: no model %s is served (served: %s)", alias, model, model, strings.Join(served, ", "))
		}
	}
	return nil
}

// aliased serves the aliases on engine: on the router when there is one
// (upstream models), else on a router of the local engine alone.
func (f aliasFlag) aliased(engine assistant.Engine) assistant.Engine {
	if len(f) == 0 {
		return engine
	}
	m, ok := engine.(*assistant.MultiEngine)
	if !ok {
		m = &assistant.MultiEngine{Default: engine}
	}
	m.Aliases = f
	return m
}

package upstream

import (
	"context"
	"errors"
	"slices"
	"sync"

	"partnerapi/internal/assistant"
)

// Models lists the models of the first healthy replica (in configured
// order) that answers and names the pool's model, else of the first that
// answers, every healthy replica being asked at once: a replica started
// with another model lists that one, and the pool's model listed by
// another replica is what a client asks for. A
// model's context window is the smallest any replica names, so a client
// that sizes its prompts to the list fits whichever replica serves it. A
// replica that cannot be reached, or does not list its models in time, is
// taken out of rotation as a failed request would take it, and counted as
// failing under the same reason.
//
// Every chat request lists the models of every upstream name, so calls
// that overlap share one round of lists (flight), as each replica's engine
// shares its fetches: a round's fault is counted once, not once for each
// caller that waited for it. The round runs on a context of its own, each
// list bounded by its engine's ModelsTimeout, so a caller that gives up
// does not fail it for the others.
func (p *Pool) Models(ctx context.Context) ([]assistant.ModelInfo, error) {
	return sharedModels(ctx, &p.flight, p.listModels)
}

// listModels is one round of Models.
func (p *Pool) listModels(ctx context.Context) ([]assistant.ModelInfo, error) {
	p.mu.Lock()
	var asked []*replica
	for _, r := range p.replicas {
		if r.healthy {
			asked = append(asked, r)
		}
	}
	p.mu.Unlock()
	if len(asked) == 0 {
		return nil, p.noReplica()
	}
	lists := make([][]assistant.ModelInfo, len(asked))
	errs := make([]error, len(asked))
	var wg sync.WaitGroup
	for i, r := range asked {
		wg.Go(func() {
			lists[i], errs[i] = r.engine.Models(ctx)
			if f := faultOf(errs[i]); f != nil && f.down {
				p.fault(r, errs[i])
			}
		})
	}
	wg.Wait()
	var out []assistant.ModelInfo
	named := false
	window := map[string]int{}
	for i, l := range lists {
		if errs[i] != nil {
			continue
		}
		names := slices.ContainsFunc(l, func(m assistant.ModelInfo) bool { return m.Name == p.name })
		if out == nil || (names && !named) {
			out, named = l, names
		}
		for _, m := range l {
			if w, ok := window[m.Name]; m.ContextWindow > 0 && (!ok || m.ContextWindow < w) {
				window[m.Name] = m.ContextWindow
			}
		}
	}
	if out == nil {
		return nil, errors.Join(errs...)
	}
	for i := range out {
		if w, ok := window[out[i].Name]; ok {
			out[i].ContextWindow = w
		}
	}
	return out, nil
}

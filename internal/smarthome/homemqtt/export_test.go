package homemqtt

import "time"

// Knows reports whether the gate keeps state for the agent name.
func (g *Gate) Knows(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.agents[name]
	return ok
}

// WithReaskAfter is cfg with the wait before the gate asks an agent once
// more for its config set to d.
func WithReaskAfter(cfg Config, d time.Duration) Config {
	cfg.reaskAfter = d
	return cfg
}

// WithBeforeReask is cfg with f called as each re-ask falls due: the
// first request was acknowledged and its wait passed, and f may hold the
// re-ask until the test has changed the broker or answered; the gate then
// checks whether the request is still unanswered.
func WithBeforeReask(cfg Config, f func(agent string)) Config {
	cfg.beforeReask = f
	return cfg
}

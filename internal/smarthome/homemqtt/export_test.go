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

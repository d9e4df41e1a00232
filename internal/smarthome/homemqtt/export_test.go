package homemqtt

// Knows reports whether the gate keeps state for the agent name.
func (g *Gate) Knows(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.agents[name]
	return ok
}

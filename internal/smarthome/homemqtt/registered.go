package homemqtt

import (
	"context"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"partnerapi/internal/background"
)

// The broker's credentials are the information API's, made per agent in
// the provider's studio (reference §7), so the agents the gate serves are
// the ones with an agent credential (partnerapi smarthome agent create).
// Anyone who can publish on the broker can publish under any name, and
// every name served would cost the gate an agent's state and a check of
// its configs: with Config Agents set, a message under a name that has no
// credential is ignored (neither checked nor answered, no state kept),
// counted in partnerapi_smarthome_mqtt_unknown_agent_total and logged at
// most once a minute; an agent whose credential is deleted is forgotten
// at its next message or by pruneAgents, and one created while the gate
// runs is served from its next message on.

// unknownLogEvery bounds how often messages of unregistered agents are
// logged: their names are chosen by whoever publishes them, as many as
// they like.
const unknownLogEvery = time.Minute

// maxLoggedName bounds how many bytes of an agent's name a log line
// carries: a topic level may be 65 535 bytes long.
const maxLoggedName = 64

// loggedName is an agent name as the gate's log lines carry it. The name
// is the topic level its sender chose, anything but the wildcards and '/',
// so it is cut to maxLoggedName bytes (on a character boundary, with the
// whole length appended) and every character that is not printable
// (control characters, the format characters that turn text around on a
// terminal, invalid UTF-8) is escaped as Go quotes it, backslash and
// quotes included: whatever handler writes the line, and whoever reads
// it, no name can end a line, make it up or hide the name's own length.
// A name that passes smarthome.ValidLogin, every registered agent's, is
// unchanged.
func loggedName(name string) string {
	cut := name
	if len(cut) > maxLoggedName {
		i := maxLoggedName
		for j := 1; j < utf8.UTFMax && i > 0 && !utf8.RuneStart(name[i]); j++ {
			i--
		}
		cut = name[:i]
	}
	q := strconv.Quote(cut)
	q = q[1 : len(q)-1]
	if len(cut) < len(name) {
		q += fmt.Sprintf("...(%d bytes)", len(name))
	}
	return q
}

// pruneEvery is how often the gate forgets the agents whose credentials
// were deleted and that have not published since.
const pruneEvery = 30 * time.Second

// ignore drops a message of an agent that is not registered, and whatever
// the gate knew of that agent from when it was.
func (g *Gate) ignore(name, kind string) {
	g.m.unknownAgents.Inc()
	if g.forget(name) {
		g.cfg.Log.Info("smarthome mqtt: agent no longer registered; what the gate knew of it is dropped", "agent", loggedName(name))
	}
	u := &g.unknown
	u.Lock()
	u.ignored++
	now := time.Now()
	if now.Sub(u.logged) < unknownLogEvery {
		u.Unlock()
		return
	}
	ignored := u.ignored
	u.logged, u.ignored = now, 0
	u.Unlock()
	g.cfg.Log.Warn("smarthome mqtt: message of an agent that is not registered ignored (partnerapi smarthome agent create registers one); such messages are logged once a minute",
		"agent", loggedName(name), "topic", "up/"+kind, "ignored", ignored)
}

// forget drops the gate's state of an agent; it reports whether there was
// any.
func (g *Gate) forget(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.agents[name]
	delete(g.agents, name)
	delete(g.heardNames, name)
	return ok
}

// pruneAgents forgets, every pruneEvery until Close, the agents that are
// no longer registered, so that a deleted agent that never publishes again
// does not keep its state for the gate's life. A store that cannot be
// read skips a round.
func (g *Gate) pruneAgents() {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-g.held.done:
			return
		case <-t.C:
		}
		g.mu.Lock()
		names := make([]string, 0, len(g.agents))
		for name := range g.agents {
			names = append(names, name)
		}
		g.mu.Unlock()
		for _, name := range names {
			var known bool
			err := g.readCatalog(func(ctx context.Context) (err error) {
				known, err = g.cfg.Agents.AgentRegistered(ctx, name)
				return err
			})
			if err != nil {
				break
			}
			if !known && g.forget(name) {
				g.cfg.Log.Info("smarthome mqtt: agent no longer registered; what the gate knew of it is dropped", "agent", loggedName(name))
			}
		}
	}
}

// agentsStartWait bounds the read of the registered set that Start waits
// for: a store that hangs must not hold the gate's start for the whole
// catalog bound, and one that fails is read again in the background.
const agentsStartWait = 2 * time.Second

// startReadingAgents reads the registered set as the gate starts, before
// it connects, so that the set exists before the first agent's message
// and an outage that begins before any agent published tells registered
// agents from made-up names all the same (hold). A store that cannot be
// read then is read again in the background, every 100 ms doubling to
// heldRetry, until it can be or the gate closes; until then every message
// held is held under the main bound.
func (g *Gate) startReadingAgents() {
	read := func(bound time.Duration) error {
		return background.Bounded(g.life.ctx, bound, g.cfg.Agents.ReadAgents)
	}
	err := read(min(g.catalogBound(), agentsStartWait))
	if err == nil {
		return
	}
	g.cfg.Log.Warn("smarthome mqtt: the registered agents cannot be read yet; reading them again in the background", "err", err)
	g.spawn(func() {
		wait := 100 * time.Millisecond
		for {
			select {
			case <-g.held.done:
				return
			case <-time.After(wait):
			}
			if err := read(g.catalogBound()); err != nil {
				wait = min(2*wait, heldRetry)
				continue
			}
			g.cfg.Log.Info("smarthome mqtt: the registered agents read")
			return
		}
	})
}

package homemqtt

import (
	"context"
	"log/slog"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/background"
	"partnerapi/internal/smarthome"
)

// An agent's message that arrives while the catalog cannot be read (its
// store down for a moment: a database that restarts, a network blip) is
// held in memory and checked once the catalog can be read again, instead
// of being dropped: the agent sent its config or status once and will not
// send it again unasked, so a dropped config would leave the gate judging
// the agent's statuses without its devices' models until the next one.
//
// Holding it here is the sound choice with the client library in use
// (eclipse/paho.mqtt.golang); leaving the message unacknowledged for the
// broker to redeliver is not:
//
//   - A broker redelivers an unacknowledged QoS 1 PUBLISH only when the
//     client reconnects with the session it had (MQTT 3.1.1 §4.4), never
//     while the connection lasts. The gate's session is clean (Start: a
//     broker that restarted without persistence must get the
//     subscriptions anew), so a withheld acknowledgement redelivers
//     nothing, and the message is gone at the next reconnect.
//   - A persistent session instead would have the broker queue every
//     agent's messages for a gate that is stopped, for as long as it is,
//     and the unacknowledged messages fill the broker's in-flight window
//     (Mosquitto's max_inflight_messages, 20 by default): the broker then
//     stops sending the gate anything, every agent's messages included,
//     until the catalog is back.
//   - The library calls message handlers in order on one goroutine (the
//     default SetOrderMatters(true)) and requires them not to block, so
//     waiting in the handler for the store is no option either.
//
// What is held is bounded (maxHeld messages, maxHeldBytes of payload):
// beyond that the oldest held message is dropped, counted in
// partnerapi_smarthome_mqtt_held_dropped_total and logged, because an
// agent's newer message carries its newer config or state. With the gate
// limited to registered agents, the messages of agents that were not in
// the registered set last read are held under a bound of their own
// (maxHeldUnknown, maxHeldUnknownBytes; see hold). The held count
// is the gauge partnerapi_smarthome_mqtt_held. Messages are held and then
// checked in the order they arrived, one FIFO for all agents, so each
// agent's order is kept; while any message is held, newer ones queue behind
// it even if the catalog has come back, so none overtakes an older one.

// maxHeld and maxHeldBytes bound the agent messages held for a catalog
// that cannot be read: a config and a few statuses for each of a few
// hundred agents, in a few megabytes at most (a config of a hundred
// devices is some 30 KiB).
const (
	maxHeld      = 1000
	maxHeldBytes = 8 << 20
)

// maxHeldUnknown and maxHeldUnknownBytes bound, apart from the others, the
// held messages of agents that were not registered when the registered
// set was last read: a config and a few statuses for each of the few
// agents registered during an outage, while made-up names fill this bound
// alone.
const (
	maxHeldUnknown      = 100
	maxHeldUnknownBytes = 1 << 20
)

// The two bounds, as indexes of the gate's held counts.
const (
	registeredBound = 0
	unknownBound    = 1
)

// heldCount is how many messages are held under one bound, and their
// payloads' size.
type heldCount struct{ n, bytes int }

// heldBounds are the limits of each bound, by index.
var heldBounds = [2]heldCount{registeredBound: {maxHeld, maxHeldBytes}, unknownBound: {maxHeldUnknown, maxHeldUnknownBytes}}

// heldRetry bounds the wait between two attempts to read the catalog while
// messages are held: the first after 100 ms, doubling to this.
const heldRetry = 5 * time.Second

// catalogTimeout bounds one read of the catalog for an agent's message.
// The catalog comes from the database when its snapshot is due for a
// recheck; a database that takes the query and never answers (a stalled
// disk, a table another connection holds locked, a reader pool held by
// reads that do not end) would otherwise hold the client library's one
// message goroutine, and every agent's message after it, for good. Past
// the bound the message is held and retried like one that met an outage.
const catalogTimeout = 10 * time.Second

// readCatalog runs read under the gate's catalog bound; a read the bound
// ended fails with an error that wraps context.DeadlineExceeded, whatever
// the driver made of the cancellation.
func (g *Gate) readCatalog(read func(ctx context.Context) error) error {
	return background.Bounded(g.life.ctx, g.catalogBound(), read)
}

// catalogBound is the bound of one read of the store (Config
// CatalogTimeout, catalogTimeout unless set).
func (g *Gate) catalogBound() time.Duration {
	if g.cfg.CatalogTimeout > 0 {
		return g.cfg.CatalogTimeout
	}
	return catalogTimeout
}

// heldMessage is an agent's message waiting for the catalog; bound is
// the bound it is held under.
type heldMessage struct {
	agent, kind string
	payload     []byte
	bound       int
}

// handle checks one agent message and answers it; it fails only when the
// catalog cannot be read, and then has done nothing the message's retry
// would repeat.
//
// A message of an agent that is not registered (Config Agents) is
// ignored here, after the check of the registration, which reads the same
// store as the catalog: one whose agent cannot be checked for an outage is
// held, under the bound of agents not registered when the registered set
// was last read if its agent was not (hold).
func (g *Gate) handle(name, kind string, payload []byte) error {
	var a *smarthome.Agent
	var msg *Message
	known := true
	err := g.readCatalog(func(ctx context.Context) (err error) {
		if g.cfg.Agents != nil {
			if known, err = g.cfg.Agents.AgentRegistered(ctx, name); err != nil || !known {
				return err
			}
		}
		a = g.agent(name)
		msg, err = Check(ctx, g.cat, a, kind, payload)
		return err
	})
	if err != nil {
		return err
	}
	if !known {
		g.ignore(name, kind)
		return nil
	}
	g.recordHeard(name)
	if kind == "status" && a.AskConfig() {
		// The cloud asks an agent for its config as the protocol does
		// (down/config_request, answered on up/config with the whole list).
		g.askConfig(g.client, name, a, false)
	}
	g.answer(name, kind, a, msg)
	return nil
}

// onMessage is the client library's handler for the agents' messages. It
// checks a message at once when nothing is held, else queues it behind
// the held ones. The library calls it on one goroutine, one message at a
// time (SetOrderMatters(true), its default), so a message checked here
// never runs beside one that retryHeld checks: retryHeld checks only while
// a message is held, and this checks only while none is.
func (g *Gate) onMessage(_ mqtt.Client, m mqtt.Message) {
	name, kind, ok := g.agentOf(m.Topic())
	if !ok || !g.leads() {
		// A gate whose replica no longer leads leaves the message to the
		// leader, which hears it too.
		return
	}
	if g.cfg.Agents != nil && !smarthome.ValidLogin(name) {
		// No credential can have this name (the Service refuses to create
		// one), so no outage can hide a registration: ignored at once,
		// never held, where it would take a place of the held messages'
		// bounds from a name that may be an agent's.
		g.ignore(name, kind)
		return
	}
	msg := heldMessage{agent: name, kind: kind, payload: m.Payload()}
	g.held.Lock()
	waiting := len(g.held.queue) > 0
	g.held.Unlock()
	if !waiting {
		err := g.handle(name, kind, msg.payload)
		if err == nil {
			return
		}
		g.hold(msg, err)
		return
	}
	g.hold(msg, nil)
}

// hold queues a message behind the held ones. When the gate is limited
// to registered agents (Config Agents), a message whose agent was not
// registered when the registered set was last read is held under a bound
// of its own, smaller (maxHeldUnknown, maxHeldUnknownBytes): messages
// under names anyone on the broker can make up, held beside the
// registered agents', would push their configs out of the bound in a
// moment, and dropped at once they would take with them the messages of
// an agent registered during the outage (another process, the CLI, may
// write the credential while this one cannot read), which are checked
// like the others once the store is back. Made-up names can still push
// such an agent's messages out of their bound, never a registered one's;
// one whose config is lost is asked for it at its next status
// (AskConfig). When no set was ever read (the store down since the gate
// started, see startReadingAgents), nothing tells junk from agents and
// every message is held under the main bound.
func (g *Gate) hold(m heldMessage, cause error) {
	if g.cfg.Agents != nil {
		if registered, read := g.cfg.Agents.AgentLastRegistered(m.agent); read && !registered {
			m.bound = unknownBound
		}
	}
	g.held.Lock()
	g.holdLocked(m, cause)
	g.held.Unlock()
}

// holdLocked queues a message for a catalog that cannot be read, dropping
// the oldest held ones of its bound beyond that bound's limits (never the
// one retryHeld is checking); g.held is locked.
func (g *Gate) holdLocked(m heldMessage, cause error) {
	h := &g.held
	limit := heldBounds[m.bound]
	if len(m.payload) > limit.bytes {
		// Held, it would push out every other message and then itself.
		g.m.heldDropped.Inc()
		h.dropped++
		g.cfg.Log.Warn("smarthome mqtt: agent message larger than what is held for the catalog; dropped",
			"agent", loggedName(m.agent), "topic", "up/"+m.kind, "bytes", len(m.payload), "max_held_bytes", limit.bytes, "err", cause)
		return
	}
	if len(h.queue) == 0 {
		g.cfg.Log.Warn("smarthome mqtt: catalog unavailable; holding agent messages until it can be read",
			"agent", loggedName(m.agent), "topic", "up/"+m.kind, "err", cause, "max_held", maxHeld, "max_held_unregistered", maxHeldUnknown)
	}
	h.queue = append(h.queue, m)
	c := &h.count[m.bound]
	c.n++
	c.bytes += len(m.payload)
	first := 0
	if h.busy {
		first = 1
	}
	for c.n > limit.n || c.bytes > limit.bytes {
		i := first
		for i < len(h.queue) && h.queue[i].bound != m.bound {
			i++
		}
		if i == len(h.queue) {
			break // only the one being checked is left of its bound
		}
		old := h.queue[i]
		h.queue = append(h.queue[:i], h.queue[i+1:]...)
		c.n--
		c.bytes -= len(old.payload)
		g.m.heldDropped.Inc()
		// The first drop of an outage is a WARN line; the others, one per
		// message that comes while it lasts, go to DEBUG and the count to
		// the metric and to the line that reports the recovery.
		level := slog.LevelDebug
		if h.dropped == 0 {
			level = slog.LevelWarn
		}
		h.dropped++
		g.cfg.Log.Log(context.Background(), level, "smarthome mqtt: too many agent messages held for the catalog; the oldest is dropped",
			"agent", loggedName(old.agent), "topic", "up/"+old.kind, "registered_when_last_read", old.bound == registeredBound,
			"max_held", limit.n, "max_held_bytes", limit.bytes)
	}
	g.m.held.Set(float64(len(h.queue)))
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// retryHeld checks the held messages, oldest first, once the catalog can be
// read, until Close; it runs on a goroutine of its own for the gate's life,
// trying the catalog every 100 ms doubling to heldRetry while messages are
// held.
func (g *Gate) retryHeld() {
	h := &g.held
	wait := 100 * time.Millisecond
	for {
		h.Lock()
		empty := len(h.queue) == 0
		h.Unlock()
		var timer <-chan time.Time
		if !empty {
			timer = time.After(wait)
		}
		select {
		case <-h.done:
			return
		case <-h.wake:
			continue
		case <-timer:
		}
		err := g.readCatalog(func(ctx context.Context) error {
			_, err := g.cat.Catalog(ctx)
			return err
		})
		if err != nil {
			wait = min(2*wait, heldRetry)
			continue
		}
		wait = 100 * time.Millisecond
		g.drainHeld()
	}
}

// drainHeld checks held messages in order until none is left or the
// catalog fails again. The message being checked stays first in the queue
// (busy) until it has been, so that onMessage queues a newer message
// behind it rather than check that one first; the lock is not held while
// checking, so the client's goroutine never waits for the store.
func (g *Gate) drainHeld() {
	h := &g.held
	checked := 0
	for {
		h.Lock()
		if len(h.queue) == 0 {
			h.queue = nil
			h.Unlock()
			break
		}
		m := h.queue[0]
		h.busy = true
		h.Unlock()
		err := g.handle(m.agent, m.kind, m.payload)
		h.Lock()
		h.busy = false
		if len(h.queue) == 0 {
			// Close dropped the held messages while this one was
			// checked; there is nothing left to take off the queue.
			h.Unlock()
			break
		}
		if err != nil {
			g.cfg.Log.Warn("smarthome mqtt: catalog unavailable again; still holding agent messages", "held", len(h.queue), "err", err)
			h.Unlock()
			break
		}
		h.queue[0] = heldMessage{}
		h.queue = h.queue[1:]
		h.count[m.bound].n--
		h.count[m.bound].bytes -= len(m.payload)
		g.m.held.Set(float64(len(h.queue)))
		h.Unlock()
		checked++
	}
	if checked > 0 {
		h.Lock()
		left, dropped := len(h.queue), h.dropped
		if left == 0 {
			h.dropped = 0
		}
		h.Unlock()
		g.cfg.Log.Info("smarthome mqtt: catalog readable again; held agent messages checked", "checked", checked, "still_held", left, "dropped", dropped)
	}
}

// closeHeld tells the gate's goroutines that it closed; it reports
// whether this call did.
func (g *Gate) closeHeld() bool {
	g.held.Lock()
	defer g.held.Unlock()
	return g.closeHeldLocked()
}

// closing reports whether Close was called.
func (g *Gate) closing() bool {
	select {
	case <-g.held.done:
		return true
	default:
		return false
	}
}

// closeHeldLocked closes g.held.done unless it is; it reports whether it
// did. g.held is locked.
func (g *Gate) closeHeldLocked() bool {
	select {
	case <-g.held.done:
		return false
	default:
		close(g.held.done)
		return true
	}
}

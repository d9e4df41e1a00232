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
// agent's newer message carries its newer config or state. The held count
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
	bound := g.cfg.CatalogTimeout
	if bound <= 0 {
		bound = catalogTimeout
	}
	return background.Bounded(context.Background(), bound, read)
}

// heldMessage is an agent's message waiting for the catalog.
type heldMessage struct {
	agent, kind string
	payload     []byte
}

// handle checks one agent message and answers it; it fails only when the
// catalog cannot be read, and then has done nothing the message's retry
// would repeat.
//
// A message of an agent that is not registered (Config Agents) is
// ignored here, after the check of the registration, which reads the same
// store as the catalog: one whose agent cannot be checked for an outage is
// held like any other if its agent was registered when the registered set
// was last read, and ignored if not (hold).
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
	if kind == "status" && a.AskConfig() {
		// The cloud asks an agent for its config as the protocol does
		// (down/config_request, answered on up/config with the whole list).
		withdraw := a.ConfigRequested()
		if !g.publish(g.client, name, smarthome.ConfigRequestKind, []byte("{}")) {
			withdraw()
		}
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
	if !ok {
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
		if !g.hold(msg, err) {
			g.ignore(name, kind)
		}
		return
	}
	if !g.hold(msg, nil) {
		g.ignore(name, kind)
	}
}

// hold queues a message behind the held ones unless the gate is limited to
// registered agents (Config Agents) and its agent was not registered when
// the registered set was last read: it reports whether it did, and one it
// did not is for the caller to ignore as unknown. Held like the others,
// messages under names anyone on the broker can make up would push the
// registered agents' held configs out of the bound in a moment.
//
// An agent registered during the outage, after that read, is ignored too
// until the store can be read again, and its messages of that window are
// lost. That is accepted rather than holding such names in a smaller bound
// of their own: registering an agent writes the same store whose outage
// this is, so few can be registered meanwhile; the gate asks an agent
// whose config it lacks for one at its next status (AskConfig), so a lost
// config comes back unasked by anyone; and a separate bound would still
// hold junk, and could still be filled by junk ahead of the new agent's
// messages. When no set was ever read (the store down since the gate
// started), nothing tells junk from agents and every message is held.
func (g *Gate) hold(m heldMessage, cause error) bool {
	if g.cfg.Agents != nil {
		if registered, read := g.cfg.Agents.AgentLastRegistered(m.agent); read && !registered {
			return false
		}
	}
	g.held.Lock()
	g.holdLocked(m, cause)
	g.held.Unlock()
	return true
}

// holdLocked queues a message for a catalog that cannot be read, dropping
// the oldest held ones beyond the bounds (never the one retryHeld is
// checking); g.held is locked.
func (g *Gate) holdLocked(m heldMessage, cause error) {
	h := &g.held
	if len(m.payload) > maxHeldBytes {
		// Held, it would push out every other message and then itself.
		g.m.heldDropped.Inc()
		h.dropped++
		g.cfg.Log.Warn("smarthome mqtt: agent message larger than what is held for the catalog; dropped",
			"agent", loggedName(m.agent), "topic", "up/"+m.kind, "bytes", len(m.payload), "max_held_bytes", maxHeldBytes, "err", cause)
		return
	}
	if len(h.queue) == 0 {
		g.cfg.Log.Warn("smarthome mqtt: catalog unavailable; holding agent messages until it can be read",
			"agent", loggedName(m.agent), "topic", "up/"+m.kind, "err", cause, "max_held", maxHeld)
	}
	h.queue = append(h.queue, m)
	h.bytes += len(m.payload)
	first := 0
	if h.busy {
		first = 1
	}
	for len(h.queue) > first && (len(h.queue) > maxHeld || h.bytes > maxHeldBytes) {
		old := h.queue[first]
		h.queue = append(h.queue[:first], h.queue[first+1:]...)
		h.bytes -= len(old.payload)
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
			"agent", loggedName(old.agent), "topic", "up/"+old.kind, "max_held", maxHeld, "max_held_bytes", maxHeldBytes)
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
		if err != nil {
			g.cfg.Log.Warn("smarthome mqtt: catalog unavailable again; still holding agent messages", "held", len(h.queue), "err", err)
			h.Unlock()
			break
		}
		h.queue[0] = heldMessage{}
		h.queue = h.queue[1:]
		h.bytes -= len(m.payload)
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

// Package homemqtt plays the cloud's side of the smart home MQTT protocol
// (reference §7) on a broker of the operator's, so that an agent under
// development can be pointed at a local Mosquitto instead of the
// provider's broker: the gate publishes the retained global configuration
// that tells agents where the information API is, reads every agent's
// up/config and up/status, checks them against the catalog the API serves
// (smarthome.Agent), and answers what it finds on the agent's down/errors;
// after a config it asks for the configured devices' states
// (down/status_request), and an agent whose status comes before its config
// is asked for its config (down/config_request), whose answer replaces the
// devices the gate knew of the agent while other configs merge into them
// (smarthome.Agent Config). For the admin API it sends
// what the provider's app makes the cloud send: commands (down/commands),
// a device renamed or moved (down/rename_device_request,
// down/change_group_device_request), error reports (down/errors) and
// requests for an agent's whole config (down/config_request).
// The provider documents no body for down/errors (clients only log it), so
// the gate sends the findings in the shape of POST /v1/mqtt-gate/validate's
// report.
package homemqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
)

// DefaultRoot is the protocol's topic root (reference §7): the global
// configuration is ROOT/__config, an agent's topics ROOT/<agent>/….
const DefaultRoot = "sberdevices/v1"

// Catalogs gives the catalog the information API serves at the moment.
type Catalogs interface {
	Catalog(ctx context.Context) (*smarthome.Catalog, error)
}

// Registry tells which agents are registered: smarthome.Service, whose
// agent credentials are the broker's (reference §7).
type Registry interface {
	AgentRegistered(ctx context.Context, login string) (bool, error)
	// AgentLastRegistered answers from the last registered set read,
	// without the store; read is false when none ever was.
	AgentLastRegistered(login string) (registered, read bool)
	// ReadAgents reads the registered set (the gate's start does, so that
	// AgentLastRegistered has one before the first message).
	ReadAgents(ctx context.Context) error
}

// Config is how the gate reaches the broker and what it announces.
type Config struct {
	Broker             string // e.g. tcp://127.0.0.1:1883
	Username, Password string // the broker's, when it asks for them
	ClientID           string
	// Root is the topic root, DefaultRoot unless several gates share one
	// broker (each then serves the agents under its own root).
	Root string
	// Endpoint is the information API's address announced in the global
	// configuration (its http_api_endpoint).
	Endpoint string
	Log      *slog.Logger
	// Metrics receives the gate's connection state and what it dropped
	// (NewMetrics); nil keeps them unregistered.
	Metrics *Metrics
	// CatalogTimeout bounds each read of the catalog an agent's message
	// needs (0 means catalogTimeout); past it the message is held as for a
	// catalog that cannot be read.
	CatalogTimeout time.Duration
	// reaskAfter, when set, replaces reaskAfter (tests).
	reaskAfter time.Duration
	// beforeReask, when set, is called with the agent's name as a re-ask
	// falls due, after its wait and before the checks of whether it still
	// goes out (tests: it may hold the re-ask while the test takes the
	// broker away, or until an agent's answer has been read).
	beforeReask func(agent string)
	// Agents, when set, limits the gate to the agents it registers
	// (registered.go): a message under any other name is ignored. Nil
	// serves every name that publishes under Root, for a broker whose own
	// ACLs decide who may.
	Agents Registry
	// leading, when set (a Replica's gate, replica.go), is asked before
	// the gate reads an agent's message or publishes anything: false once
	// the replica's lease may have lapsed, so that a gate whose replica
	// lost the leadership falls silent at once, before Close, however
	// long Close takes.
	leading func() bool
	// heard, when set, is told the name of each agent the gate serves the
	// first time it hears it (replica.go records it for the next leader).
	heard func(name string)
}

// Gate is a connected gate; Close disconnects it.
type Gate struct {
	cfg    Config
	cat    Catalogs
	client mqtt.Client
	store  mqtt.Store
	m      *Metrics

	mu     sync.Mutex
	agents map[string]*smarthome.Agent
	// heardNames are the agents told to Config heard, once each.
	heardNames map[string]bool

	// life is the work in progress Close waits for (life.go).
	life life

	// unknown rate-limits the log of messages from unregistered agents
	// (registered.go).
	unknown struct {
		sync.Mutex
		logged  time.Time
		ignored int // since the last line
	}

	// held are the agents' messages that came while the catalog could not
	// be read, oldest first (held.go), count how many there are and their
	// payloads' size, by bound (registered when last read, or not); busy:
	// retryHeld is checking the first; wake tells retryHeld of a new one,
	// done that the gate closed.
	held struct {
		sync.Mutex
		queue []heldMessage
		count [2]heldCount
		busy  bool
		// dropped counts the messages dropped since nothing was held.
		dropped int
		wake    chan struct{}
		done    chan struct{}
	}

	// link is the connection's state as the gate logs and exports it,
	// guarded by its mutex together with the gauge, so that the two agree.
	link struct {
		sync.Mutex
		gen    uint64    // bumped by every connect
		up     bool      // connected and subscribed to the agents' topics
		ever   bool      // connected once at least (a later connect is a reconnect)
		closed bool      // Close was called: nothing is up any more
		lostAt time.Time // when the connection was last lost
	}
}

// Message is what the gate publishes on an agent's down/errors: the topic
// of the agent's message it answers, why that message could not be read
// at all, or the devices it found something wrong with.
type Message struct {
	Topic   string                   `json:"topic"`
	Errors  []string                 `json:"errors,omitempty"`
	Devices []smarthome.DeviceReport `json:"devices,omitempty"`
}

// notify is the QoS of what the gate publishes by itself (the global
// configuration, findings, status requests): 0, at most once. Each is sent
// again by the next connect or agent message, and a QoS 1 message in
// flight when the connection drops is resent by the client library in a
// way its race detector flags (eclipse-paho/paho.mqtt.golang#703);
// commands, which an administrator sends once and waits for, keep QoS 1,
// and so do config requests, which must reach an agent that is
// reconnecting (configrequest.go).
const notify = 0

// MaxReconnectInterval bounds the backoff between reconnection attempts
// (1 s, doubling): the client library's default, 10 minutes, would leave
// agents unanswered for that long after a broker that restarts for an
// upgrade is back, and one attempt every 10 s costs a broker nothing.
const MaxReconnectInterval = 10 * time.Second

// commandWait is how long Command waits for the broker to acknowledge a
// command before it withdraws it and reports the gate unavailable.
const commandWait = 5 * time.Second

// Start connects to the broker and starts serving; a broker that cannot be
// reached within ten seconds is an error. After a lost connection the
// client reconnects by itself with backoff (MaxReconnectInterval), and
// every connect subscribes again and then publishes the global
// configuration: the session is clean, so a broker that restarted without
// persistence, which has forgotten the subscriptions and the retained
// message, gets both anew. A reconnection then asks the agents the gate
// knows for their configs (resync).
func Start(cfg Config, cat Catalogs) (*Gate, error) {
	return StartContext(context.Background(), cfg, cat)
}

// StartContext is Start that stops waiting for the broker when ctx ends: a
// replica stepping down or stopping while its new gate connects to a
// broker that does not answer returns at once instead of after the
// connection's 10 s timeout. The library's attempt itself ends in the
// background.
func StartContext(ctx context.Context, cfg Config, cat Catalogs) (*Gate, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("homemqtt: the information API's endpoint is required")
	}
	if cfg.Root == "" {
		cfg.Root = DefaultRoot
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ClientID == "" {
		cfg.ClientID = fmt.Sprintf("partnerapi-gate-%d", time.Now().UnixNano())
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	g := &Gate{cfg: cfg, cat: cat, agents: map[string]*smarthome.Agent{}, heardNames: map[string]bool{}, store: newResendStore(), m: cfg.Metrics}
	g.held.wake, g.held.done = make(chan struct{}, 1), make(chan struct{})
	g.startLife()
	if cfg.Agents != nil {
		g.startReadingAgents()
	}
	opts := mqtt.NewClientOptions().AddBroker(cfg.Broker).SetClientID(cfg.ClientID).
		SetUsername(cfg.Username).SetPassword(cfg.Password).
		SetCleanSession(true).SetAutoReconnect(true).SetConnectTimeout(10 * time.Second).
		SetMaxReconnectInterval(MaxReconnectInterval).SetStore(g.store).
		SetOnConnectHandler(g.onConnect).
		SetConnectionLostHandler(g.onLost).
		SetReconnectingHandler(func(mqtt.Client, *mqtt.ClientOptions) {
			// Every attempt, every few seconds for as long as the broker
			// is away: the loss and the recovery are logged once each.
			cfg.Log.Debug("smarthome mqtt: reconnecting", "broker", cfg.Broker)
		})
	g.client = mqtt.NewClient(opts)
	tok := g.client.Connect()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	var gaveUp error
	select {
	case <-tok.Done():
	case <-timeout.C:
		gaveUp = errors.New("timed out")
	case <-ctx.Done():
		gaveUp = ctx.Err()
	}
	if gaveUp != nil {
		g.client.Disconnect(0)
		g.closeHeld()
		g.endLife()
		return nil, fmt.Errorf("homemqtt: connect to %s: %w", cfg.Broker, gaveUp)
	}
	if err := tok.Error(); err != nil {
		g.closeHeld()
		g.endLife()
		return nil, fmt.Errorf("homemqtt: connect to %s: %w", cfg.Broker, err)
	}
	g.spawn(g.retryHeld)
	if cfg.Agents != nil {
		g.spawn(g.pruneAgents)
	}
	return g, nil
}

// Close disconnects, leaving the retained configuration on the broker for
// agents that start later, and returns once none of the gate's goroutines
// is left (life.go): after it nothing more is published, and Send and
// Command refuse with ErrClosed. It returns within a quarter of a second
// even while the broker is away (the client library then abandons its
// reconnection attempts at the end of the current backoff), unless a
// message in flight waits for the broker's acknowledgement, which the
// disconnection fails.
//
// The gate's goroutines and timers are told before the disconnection
// (closing), which fails the config requests still in flight: those are
// no drops of the broker's, and a re-ask due meanwhile must not go out
// on a connection being closed.
func (g *Gate) Close() {
	first := g.closeHeld()
	idle := g.endLife()
	g.client.Disconnect(250)
	g.link.Lock()
	g.link.closed = true
	g.setUpLocked(false)
	g.link.Unlock()
	// The held messages go before the wait, which a check of one of them
	// may be part of: it then finds the queue empty (drainHeld).
	if first {
		g.dropHeld()
	}
	<-idle
}

// dropHeld drops the agent messages held for the catalog as the gate
// closes.
func (g *Gate) dropHeld() {
	g.held.Lock()
	defer g.held.Unlock()
	if n := len(g.held.queue); n > 0 {
		// They live in memory only: a gate that stops loses them, as the
		// broker, which delivered them, will not send them again.
		g.m.heldDropped.Add(float64(n))
		g.cfg.Log.Warn("smarthome mqtt: gate closed with agent messages held for the catalog; they are dropped", "held", n)
		g.held.queue, g.held.count = nil, [2]heldCount{}
		g.m.held.Set(0)
	}
}

// Connected reports whether the gate is connected to its broker and
// subscribed to the agents' topics, that is, serving.
func (g *Gate) Connected() bool {
	g.link.Lock()
	defer g.link.Unlock()
	return g.link.up
}

// setUpLocked records whether the gate serves, in its state and its gauge;
// g.link is locked.
func (g *Gate) setUpLocked(up bool) {
	g.link.up = up
	if up {
		g.m.connected.Set(1)
	} else {
		g.m.connected.Set(0)
	}
}

// onLost logs the loss once; the client library then reconnects by itself.
// The library runs it on a goroutine of its own, which may be scheduled
// only after a quick reconnection has opened the next connection: then
// that connection's onConnect decides whether the gate is up, not this.
func (g *Gate) onLost(c mqtt.Client, err error) {
	g.link.Lock()
	if !c.IsConnectionOpen() {
		g.link.lostAt = time.Now()
		g.setUpLocked(false)
	}
	g.link.Unlock()
	g.cfg.Log.Warn("smarthome mqtt: connection to the broker lost; reconnecting with backoff, commands are refused meanwhile",
		"broker", g.cfg.Broker, "err", err, "max_backoff", MaxReconnectInterval.String())
}

// onConnect subscribes to the agents' messages and, once the broker has
// taken the subscription, announces the endpoint: an agent that reads the
// announcement and publishes its config at once must find the gate
// listening (after a broker restart the announcement is what agents wait
// for). It runs on the client's goroutine, which must not block: the
// library cannot complete a token while its own handler waits, so the
// announcement waits on a goroutine of its own.
//
// The gate counts as connected (Connected, the gauge) only once the broker
// has taken the subscription: connected but deaf is not serving.
func (g *Gate) onConnect(c mqtt.Client) {
	g.link.Lock()
	g.link.gen++
	gen, reconnect, lostAt := g.link.gen, g.link.ever, g.link.lostAt
	g.link.ever = true
	g.link.lostAt = time.Time{}
	g.link.Unlock()
	tok := c.SubscribeMultiple(map[string]byte{g.cfg.Root + "/+/up/config": 1, g.cfg.Root + "/+/up/status": 1}, g.onMessage)
	g.spawn(func() {
		subscribed := tok.WaitTimeout(10*time.Second) && tok.Error() == nil
		// A connection lost meanwhile, or replaced by a newer one, or a
		// gate closed, has nothing more to say: onLost has logged the loss.
		current := func() bool { return g.link.gen == gen && !g.link.closed && c.IsConnectionOpen() }
		g.link.Lock()
		stale := !current()
		g.link.Unlock()
		if stale {
			return
		}
		if !subscribed {
			// Connected but deaf: the gauge stays 0 until a reconnection
			// subscribes again.
			g.cfg.Log.Error("smarthome mqtt: subscribing to the agents' topics did not complete; announcing anyway", "err", tok.Error())
		}
		body, _ := json.Marshal(map[string]string{"http_api_endpoint": g.cfg.Endpoint})
		if g.leads() {
			c.Publish(g.cfg.Root+"/__config", notify, true, body)
		}
		g.link.Lock()
		if stale = !current(); !stale {
			g.setUpLocked(subscribed)
		}
		g.link.Unlock()
		if reconnect && subscribed && !stale {
			g.resync(c)
		}
		switch {
		case stale:
		case !reconnect:
			g.cfg.Log.Info("smarthome mqtt: gate connected", "broker", g.cfg.Broker, "http_api_endpoint", g.cfg.Endpoint)
		case lostAt.IsZero():
			// Reconnected before onLost ran (see there).
			g.m.reconnects.Inc()
			g.cfg.Log.Info("smarthome mqtt: gate reconnected", "broker", g.cfg.Broker)
		default:
			g.m.reconnects.Inc()
			g.cfg.Log.Info("smarthome mqtt: gate reconnected", "broker", g.cfg.Broker, "down_for", time.Since(lostAt).Round(time.Millisecond).String())
		}
	})
}

// resync asks every agent the gate knows for its whole config after a
// reconnection: what agents published while the gate was away is lost
// (its session is clean), a config that took a device off a controller
// included, and the answers replace each agent's devices
// (smarthome.Agent ConfigRequested), so the gate is up to date again
// without waiting for each agent's next config.
func (g *Gate) resync(c mqtt.Client) {
	g.mu.Lock()
	agents := make(map[string]*smarthome.Agent, len(g.agents))
	maps.Copy(agents, g.agents)
	g.mu.Unlock()
	for name, a := range agents {
		g.askConfig(c, name, a, false)
	}
	if len(agents) > 0 {
		g.cfg.Log.Info("smarthome mqtt: asked the agents for their configs after the reconnection", "agents", len(agents))
	}
}

// publish sends what the gate says by itself in answer to an agent's
// message (findings, requests), at most once. Such an answer is dropped,
// with a log line and a count, when the connection is not open: it is
// about a message the agent may have replaced by the time the broker is
// back, and the client library would otherwise drop it silently (it
// "completes" a QoS 0 publish made while it reconnects).
func (g *Gate) publish(c mqtt.Client, agent, kind string, body []byte) (sent bool) {
	return g.send(c, agent, kind, notify, body) != nil
}

// send publishes on the agent's down/<kind> at qos, or, the connection not
// open, drops the message as publish says and returns nil. A closed gate
// sends nothing and has nothing to count: it left the broker on purpose.
func (g *Gate) send(c mqtt.Client, agent, kind string, qos byte, body []byte) mqtt.Token {
	if g.closing() || !g.leads() {
		return nil
	}
	if !c.IsConnectionOpen() {
		g.m.dropped.WithLabelValues(kind, droppedUnreachable).Inc()
		g.cfg.Log.Warn("smarthome mqtt: broker unreachable, message dropped", "agent", loggedName(agent), "topic", "down/"+kind)
		return nil
	}
	return c.Publish(g.cfg.Root+"/"+agent+"/down/"+kind, qos, false, body)
}

// agentOf splits "ROOT/<agent>/up/<kind>".
func (g *Gate) agentOf(topic string) (agent, kind string, ok bool) {
	rest, found := strings.CutPrefix(topic, g.cfg.Root+"/")
	if !found {
		return "", "", false
	}
	agent, kind, found = strings.Cut(rest, "/up/")
	return agent, kind, found && agent != "" && !strings.Contains(agent, "/") && (kind == "config" || kind == "status")
}

// leads reports whether the gate may speak: always, but for a Replica's
// gate whose lease may have lapsed (Config leading).
func (g *Gate) leads() bool {
	return g.cfg.leading == nil || g.cfg.leading()
}

func (g *Gate) agent(name string) *smarthome.Agent {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.agents[name]
	if a == nil {
		a = &smarthome.Agent{}
		g.agents[name] = a
	}
	return a
}

// answer tells the agent what its message's check found (down/errors, none
// for a valid message) and, after a config it could read, asks for the
// states of the devices that config carried (down/status_request, answered
// on up/status), as the cloud does, so that an agent's status path is
// checked without anyone touching a device.
func (g *Gate) answer(name, kind string, a *smarthome.Agent, msg *Message) {
	if msg == nil {
		g.cfg.Log.Info("smarthome mqtt: agent message valid", "agent", loggedName(name), "topic", "up/"+kind)
	} else {
		g.cfg.Log.Info("smarthome mqtt: agent message has findings", "agent", loggedName(name), "topic", "up/"+kind,
			"errors", len(msg.Errors), "devices", len(msg.Devices))
		body, _ := json.Marshal(msg)
		g.publish(g.client, name, "errors", body)
	}
	if kind == "config" && (msg == nil || len(msg.Errors) == 0) {
		if ids := a.Latest(); len(ids) > 0 {
			body, _ := json.Marshal(map[string][]string{"devices": ids})
			g.publish(g.client, name, "status_request", body)
		}
	}
}

// Check judges one agent message of kind config or status and returns what
// to send on the agent's down/errors, nil when there is nothing to report
// (warnings alone are not reported, but for a model conflict). An error
// means the catalog could not be read.
//
// A model conflict is the one warning reported: one model id given two
// feature sets, in the message or against the agent's earlier configs
// (smarthome.ReasonModelConflict), leaves the provider showing a device
// with a stale model it caches by id (reference §7), and nothing else
// would tell the agent's developer, while the other warnings are the
// reference's own leniencies.
func Check(ctx context.Context, cat Catalogs, a *smarthome.Agent, kind string, payload []byte) (*Message, error) {
	c, err := cat.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	check := a.Config
	if kind == "status" {
		check = a.Status
	}
	msg := &Message{Topic: "up/" + kind}
	rep, err := check(c, payload)
	var inv *smarthome.InvalidError
	switch {
	case errors.As(err, &inv):
		msg.Errors = inv.Details
		return msg, nil
	case err != nil:
		msg.Errors = []string{err.Error()}
		return msg, nil
	}
	for _, d := range rep.Devices {
		if !d.OK() || slices.ContainsFunc(d.Warnings, func(p smarthome.Problem) bool { return p.Reason == smarthome.ReasonModelConflict }) {
			msg.Devices = append(msg.Devices, d)
		}
	}
	if len(msg.Devices) == 0 {
		return nil, nil
	}
	return msg, nil
}

package homemqtt

import (
	"fmt"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
)

// Metrics are the gate's series on /metrics: whether it is connected, how
// often it reconnected, what it dropped because the broker was away or did
// not acknowledge it, and
// the agents' messages it holds for a catalog that cannot be read.
type Metrics struct {
	connected  prometheus.Gauge
	reconnects prometheus.Counter
	dropped    *prometheus.CounterVec
	// held: agent messages waiting for a catalog that cannot be read;
	// heldDropped: those dropped beyond the bound or at Close (held.go).
	held        prometheus.Gauge
	heldDropped prometheus.Counter
	// unknownAgents: messages ignored because their agent is not
	// registered (registered.go); no label, the names are anyone's.
	unknownAgents prometheus.Counter
	// leader: 1 while this replica leads the gate (replica.go).
	leader prometheus.Gauge
}

// NewMetrics creates the gate's collectors and registers them with reg
// (nil: registered nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "partnerapi_smarthome_mqtt_connected",
			Help: "1 while the smart home MQTT gate is connected to its broker and subscribed to the agents' topics, else 0.",
		}),
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "partnerapi_smarthome_mqtt_reconnects_total",
			Help: "Times the smart home MQTT gate reconnected to its broker after losing it.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_smarthome_mqtt_dropped_total",
			Help: "Messages to agents the smart home MQTT gate dropped, by down/ topic and reason: unreachable, not sent because the connection to its broker was down; unacknowledged, sent at QoS 1 (commands, the app's changes, config requests) but not acknowledged by the broker within 5 s, or failed, and withdrawn. What the admin API sends is refused with 503 either way; a config request of the gate's own expects no answer.",
		}, []string{"topic", "reason"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "partnerapi_smarthome_mqtt_held",
			Help: "Agent messages (up/config, up/status) the smart home MQTT gate holds because the catalog cannot be read; they are checked, in order, once it can.",
		}),
		heldDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "partnerapi_smarthome_mqtt_held_dropped_total",
			Help: "Agent messages the smart home MQTT gate dropped unchecked while the catalog could not be read: the oldest held beyond its bound (1000 messages, 8 MiB; for agents not registered when the registered set was last read, 100 messages, 1 MiB), and those still held when it stopped.",
		}),
		unknownAgents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "partnerapi_smarthome_mqtt_unknown_agent_total",
			Help: "Agent messages (up/config, up/status) the smart home MQTT gate ignored, unchecked and unanswered, because no agent credential has their topic's agent name.",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "partnerapi_smarthome_mqtt_leader",
			Help: "1 while this replica leads the smart home MQTT gate (holds its lease in the database, connects to the broker and answers the agents), else 0; of the replicas on one database and topic root, one at a time.",
		}),
	}
	// Every series that can count, at 0 from the start; a status request
	// goes out at QoS 0 and is never acknowledged.
	for _, kind := range []string{"commands", smarthome.ErrorsKind, "status_request", smarthome.ConfigRequestKind, smarthome.RenameKind, smarthome.GroupKind} {
		m.dropped.WithLabelValues(kind, droppedUnreachable)
		if kind != "status_request" {
			m.dropped.WithLabelValues(kind, droppedUnacknowledged)
		}
	}
	if reg != nil {
		reg.MustRegister(m.connected, m.reconnects, m.dropped, m.held, m.heldDropped, m.unknownAgents, m.leader)
	}
	return m
}

// The reasons of partnerapi_smarthome_mqtt_dropped_total: a message not
// sent because the connection was not open, and one sent at QoS 1 that the
// broker did not acknowledge within commandWait (or whose publication
// failed), withdrawn from the client's resend store.
const (
	droppedUnreachable    = "unreachable"
	droppedUnacknowledged = "unacknowledged"
)

// brokerError is a command the gate could not hand to its broker. It is
// the gate being unavailable for the moment (smarthome.ErrGateDown, the
// admin API's 503 with Retry-After), not the request's fault nor a bug:
// the administrator sends it again once the gate is back.
type brokerError struct{ msg string }

func (e *brokerError) Error() string { return e.msg }
func (e *brokerError) Unwrap() error { return smarthome.ErrGateDown }

// RetryAfter is how long a client should wait before sending the command
// again: the longest wait between two reconnection attempts, so that one
// attempt at least has been made by then. The client library keeps the
// time of its next attempt to itself, so the gate cannot say less.
func (e *brokerError) RetryAfter() time.Duration { return MaxReconnectInterval }

// ErrBrokerDown is a command, or another message an administrator sends
// (Gate Send), refused because the gate has lost its broker.
var ErrBrokerDown error = &brokerError{msg: "the MQTT gate has lost its broker and is reconnecting: nothing was sent to the agent; send it again once the gate is back"}

// ErrNotConnected is a command that came while serve runs a gate but the
// gate is not (yet, or any more) connected: between the listeners opening
// and the gate's first connection, which may take up to ten seconds, and
// during shutdown.
var ErrNotConnected error = &brokerError{msg: "the MQTT gate is not connected to its broker yet (starting) or any more (stopping): nothing was sent to the agent; send it again"}

// errNotTaken is a command the broker did not acknowledge in time. The
// gate withdraws it, so it is not resent after a reconnection; a broker
// that did receive it but acknowledged late may still deliver it, which
// the answer says rather than promise what the gate cannot know.
var errNotTaken error = &brokerError{msg: fmt.Sprintf("the MQTT broker did not acknowledge the message in %s: the gate withdrew it and will not resend it (a broker that received it may still deliver it); send it again if the agent did not act on it", commandWait)}

// withdraw removes an unacknowledged QoS 1 publish from the client's
// outgoing store, from which the client library resends what is pending
// after it reconnects: a command the administrator was told failed must
// not reach the device later. The message id stays reserved in the client
// until it disconnects, one of 65535 per withdrawn command.
func (g *Gate) withdraw(tok mqtt.Token) {
	pt, ok := tok.(*mqtt.PublishToken)
	if !ok || pt.MessageID() == 0 {
		return
	}
	// The library's key for an outgoing message (store.go,
	// outboundKeyFromMID); TestCommandNotReplayed fails if it changes.
	g.store.Del(fmt.Sprintf("o.%d", pt.MessageID()))
}

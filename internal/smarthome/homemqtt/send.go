package homemqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"partnerapi/internal/jsonmsg"
	"strings"

	"partnerapi/internal/smarthome"
)

// What the admin API sends to agents through the gate: commands and the
// messages a user's action in the provider's app triggers, each checked
// first and delivered at QoS 1 while an administrator waits.

// Command sends a command to an agent on its down/commands after checking
// it against the devices of the agent's config (smarthome.Agent
// Command), as that check rebuilt it: never the bytes it was given; it
// waits up to five seconds for the broker to take it.
//
// A command is a user's action at a moment (switch the lamp on now), so it
// is never queued for a broker that is away: replayed after an outage of
// unknown length it would switch a device when nobody asked for it any
// more. While the gate is disconnected a command is refused at once
// (ErrBrokerDown, the admin API's 503 with Retry-After), and one the
// broker does not take in time is withdrawn from the client library's
// outgoing store, which would otherwise resend it on reconnection, and
// refused the same way.
func (g *Gate) Command(ctx context.Context, agent string, msg []byte) (string, error) {
	if g.closing() {
		return "", ErrClosed
	}
	if agent == "" || strings.ContainsAny(agent, "/+#") {
		return "", &smarthome.InvalidError{Details: []string{"agent '" + jsonmsg.Echo(agent) + "' cannot be a topic level"}}
	}
	if err := g.refuseUnregistered(ctx, agent); err != nil {
		return "", err
	}
	c, err := g.cat.Catalog(ctx)
	if err != nil {
		return "", err
	}
	out, err := g.agent(agent).Command(c, msg)
	if err != nil {
		return "", err
	}
	return g.deliver(agent, "commands", out)
}

// Send publishes one of the cloud's messages that a user's action in the
// app triggers, after checking it (smarthome.Agent Rename and ChangeGroup
// against the devices of the agent's config, smarthome.ParseErrorReport
// on its own), as that check rebuilt it; kind is smarthome.RenameKind,
// GroupKind, ErrorsKind or ConfigRequestKind. It is delivered as commands
// are, and for the same reason: a user renamed or moved a device at a
// moment, and a change replayed after an outage could undo a later one the
// agent got meanwhile. A config request makes the agent's answer replace
// its devices (smarthome.Agent ConfigRequested), and a rename or a move
// keeps the agent's config of that device, renamed or moved, from being
// taken for that answer (smarthome.Agent RenameRequested, MoveRequested);
// one the broker did not take expects no answer, and a config request the
// agent does not answer in time is asked once more, as the gate's own are
// (configrequest.go).
func (g *Gate) Send(ctx context.Context, agent, kind string, msg []byte) (string, error) {
	if g.closing() {
		return "", ErrClosed
	}
	if agent == "" || strings.ContainsAny(agent, "/+#") {
		return "", &smarthome.InvalidError{Details: []string{"agent '" + jsonmsg.Echo(agent) + "' cannot be a topic level"}}
	}
	if err := g.refuseUnregistered(ctx, agent); err != nil {
		return "", err
	}
	var out []byte
	var err error
	switch kind {
	case smarthome.RenameKind, smarthome.GroupKind:
		// The agent answers with a config of the device, which must not
		// be taken for the answer to a config request. The messages are
		// rebuilt by the checks, so they parse.
		a := g.agent(agent)
		var withdraw func()
		if kind == smarthome.RenameKind {
			var r smarthome.RenameRequest
			if out, err = a.Rename(msg); err != nil {
				return "", err
			}
			_ = json.Unmarshal(out, &r)
			withdraw = a.RenameRequested(r)
		} else {
			var m smarthome.GroupRequest
			if out, err = a.ChangeGroup(msg); err != nil {
				return "", err
			}
			_ = json.Unmarshal(out, &m)
			withdraw = a.MoveRequested(m)
		}
		topic, err := g.deliver(agent, kind, out)
		if err != nil {
			withdraw()
		}
		return topic, err
	case smarthome.ErrorsKind:
		out, err = smarthome.ParseErrorReport(msg)
	case smarthome.ConfigRequestKind:
		if out, err = smarthome.ParseConfigRequest(msg); err != nil {
			return "", err
		}
		a := g.agent(agent)
		req := a.RequestConfig()
		topic, err := g.deliver(agent, kind, out)
		if err != nil {
			req.Withdraw()
			return "", err
		}
		g.reaskLater(agent, a, req)
		return topic, nil
	default:
		err = fmt.Errorf("homemqtt: the gate sends no down/%s", kind)
	}
	if err != nil {
		return "", err
	}
	return g.deliver(agent, kind, out)
}

// deliver publishes a message an administrator is waiting for on the
// agent's down/<kind> at QoS 1 and waits up to five seconds for the broker
// to take it; it is never queued for a broker that is away (see Command).
// A gate closed before it publishes, or while it waits, refuses with
// ErrClosed: nothing goes out on a client being disconnected, and a
// message the disconnection failed is no drop of the broker's.
func (g *Gate) deliver(agent, kind string, out []byte) (string, error) {
	if !g.enter() {
		return "", ErrClosed
	}
	defer g.leave()
	if !g.leads() {
		return "", errNotLeading
	}
	topic := g.cfg.Root + "/" + agent + "/down/" + kind
	if !g.client.IsConnectionOpen() {
		g.m.dropped.WithLabelValues(kind, droppedUnreachable).Inc()
		g.cfg.Log.Warn("smarthome mqtt: broker unreachable, message refused", "agent", loggedName(agent), "topic", topic)
		return "", ErrBrokerDown
	}
	tok := g.client.Publish(topic, 1, false, out)
	acked := tok.WaitTimeout(commandWait)
	if (!acked || tok.Error() != nil) && g.closing() {
		g.withdraw(tok)
		return "", ErrClosed
	}
	if !acked {
		g.withdraw(tok)
		g.m.dropped.WithLabelValues(kind, droppedUnacknowledged).Inc()
		g.cfg.Log.Warn("smarthome mqtt: the broker did not take a message in time, withdrawn", "agent", loggedName(agent), "topic", topic, "wait", commandWait.String())
		return "", errNotTaken
	}
	if err := tok.Error(); err != nil {
		g.withdraw(tok)
		g.m.dropped.WithLabelValues(kind, droppedUnacknowledged).Inc()
		g.cfg.Log.Warn("smarthome mqtt: message not sent", "agent", loggedName(agent), "topic", topic, "err", err)
		return "", &brokerError{msg: "the MQTT gate could not send the message (" + err.Error() + "); send it again"}
	}
	g.cfg.Log.Info("smarthome mqtt: message sent", "agent", loggedName(agent), "topic", topic)
	return topic, nil
}

// refuseUnregistered refuses, with an error that is a smarthome
// ErrNotFound (the admin API's 404), what an administrator sends to a login
// that has no agent credential when the gate serves registered agents only
// (Config Agents): the gate would keep state for that name until
// pruneAgents drops it, for an agent whose every message it ignores. A
// store that cannot say lets the request through, as before the check
// (a command then waits on the catalog, which that store serves too): an
// outage must not turn every registered agent into an unknown one.
func (g *Gate) refuseUnregistered(ctx context.Context, agent string) error {
	if g.cfg.Agents == nil {
		return nil
	}
	known, err := g.cfg.Agents.AgentRegistered(ctx, agent)
	if err != nil || known {
		return nil
	}
	return fmt.Errorf("agent '%s' has no credential: %w", agent, smarthome.ErrNotFound)
}

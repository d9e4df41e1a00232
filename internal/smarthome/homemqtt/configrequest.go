package homemqtt

import (
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
)

// The gate's down/config_request (after a status that came before any
// config, to every agent it knows after reconnecting to its broker, and
// when an administrator asks) is what brings its view of an agent's
// devices up to date, and it goes out when the agent may well be away: a
// reconnection of the gate often means the broker restarted, so every
// agent is reconnecting too. Two things make it reach such an agent:
//
//   - It is published at QoS 1. A broker queues a message for a client
//     that is away with a persistent session only at QoS 1 or 2 (MQTT
//     3.1.1 §3.1.2.4; Mosquitto drops QoS 0 ones unless told to keep
//     them), and delivers each at the lower of the publication's and the
//     subscription's QoS, so an agent subscribed at QoS 1 with a
//     persistent session gets it when it is back. The reference sets no
//     QoS for it (§7), and MQTT-SberGate, which subscribes at QoS 0 with
//     a clean session, gets it as before.
//   - When no config comes in answer within reaskAfter, the gate asks
//     once more: an agent with a clean session, as MQTT-SberGate's, that
//     was reconnecting when the request went out has missed it for good,
//     and it sends no config by itself on reconnecting. Once only: an
//     agent that answers neither is away or does not answer requests.
//     The gate then leaves it alone until its next config: its further
//     statuses ask nothing (smarthome.Agent AskConfig), since an agent
//     that does not answer requests would be asked at every status it
//     sends; the gate's next reconnection (resync) or an administrator's
//     request asks again, each once more at most.
//
// The down/status_request the gate sends after each config is never asked
// again: it goes out at QoS 0, nothing tracks its answer, and the agent's
// statuses come by themselves when a state changes.
//
// Like the administrator's messages (deliver), a request the broker does
// not acknowledge within commandWait is withdrawn from the client
// library's resend store, expects no answer and is counted in
// partnerapi_smarthome_mqtt_dropped_total as unacknowledged; one in
// flight when the connection drops within that wait may be resent by the
// library on reconnection, which its race detector may flag
// (eclipse-paho/paho.mqtt.golang#703), as for commands.

// reaskAfter is how long the gate waits for the answer to a config request
// before asking once more. An agent answers at once; half of
// smarthome.FullConfigWait leaves an agent whose connection blinked time
// to be back, and the request asked again the other half for its answer:
// it joins the first request's window without extending it
// (smarthome.Agent RequestConfig), so a config is taken for the answer at
// most FullConfigWait after the gate first asked.
const reaskAfter = smarthome.FullConfigWait / 2

// reaskWait is reaskAfter unless a test set the gate's own.
func (g *Gate) reaskWait() time.Duration {
	if g.cfg.reaskAfter > 0 {
		return g.cfg.reaskAfter
	}
	return reaskAfter
}

// askConfig sends the agent one of the gate's own config requests on c at
// QoS 1, and, unless it is already the second (again), asks once more
// when no config answers it in time (reaskLater). It does not wait for
// the broker, since it runs on the client library's message goroutine too:
// a goroutine of its own waits for the acknowledgement.
func (g *Gate) askConfig(c mqtt.Client, name string, a *smarthome.Agent, again bool) {
	if !g.enter() {
		return // closed: nothing more goes out
	}
	req := a.RequestConfig()
	tok := g.send(c, name, smarthome.ConfigRequestKind, 1, []byte("{}"))
	if tok == nil {
		req.Withdraw()
		g.leave()
		return
	}
	go func() {
		defer g.leave()
		if tok.WaitTimeout(commandWait) && tok.Error() == nil {
			if !again {
				g.reaskLater(name, a, req)
			}
			return
		}
		if g.closing() {
			// Close ended the connection, and the client library failed
			// the requests still in flight with it: no drop of the
			// broker's, nothing to count or warn of, and no answer to
			// wait for from a gate that is gone.
			return
		}
		g.withdraw(tok)
		req.Withdraw()
		g.m.dropped.WithLabelValues(smarthome.ConfigRequestKind, droppedUnacknowledged).Inc()
		g.cfg.Log.Warn("smarthome mqtt: the broker did not take the gate's config request in time, withdrawn",
			"agent", loggedName(name), "wait", commandWait.String(), "err", tok.Error())
	}()
}

// reaskLater asks the agent once more for its config after reaskWait when
// req is still unanswered then (no config came, no later request joined
// its window or opened another), the gate still open and still knowing
// the agent as a. Close stops the wait, or waits for a re-ask under way.
func (g *Gate) reaskLater(name string, a *smarthome.Agent, req *smarthome.ConfigRequest) {
	g.afterFunc(g.reaskWait(), func() {
		if g.closing() {
			return
		}
		// A test may hold the re-ask here; the checks below see what
		// happened meanwhile, so a test can let an agent answer however
		// slowly the machine runs and still see the re-ask withheld.
		if g.cfg.beforeReask != nil {
			g.cfg.beforeReask(name)
			if g.closing() {
				return // closed while the test held the re-ask
			}
		}
		g.mu.Lock()
		current := g.agents[name] == a
		g.mu.Unlock()
		if !current || !req.Unanswered() {
			return
		}
		g.cfg.Log.Info("smarthome mqtt: no config answered the config request; asking once more",
			"agent", loggedName(name), "after", g.reaskWait().String())
		g.askConfig(g.client, name, a, true)
	})
}

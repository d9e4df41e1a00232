package homemqtt_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

const lampStatus = `{"devices":{"lamp":{"states":[{"key":"online","value":{"type":"BOOL","bool_value":true}}]}}}`

// persistentAgent connects as an agent with a persistent session (clean
// session off) under the client id id: what the broker queued for that
// session while it was away arrives on got, whatever the subscriptions of
// this connection.
func persistentAgent(t *testing.T, url, id string) *agent {
	t.Helper()
	a := &agent{t: t, got: make(chan mqtt.Message, 16)}
	a.c = mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(false).
		SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) { a.got <- m }))
	if tok := a.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("agent connect: %v", tok.Error())
	}
	t.Cleanup(func() { a.c.Disconnect(100) })
	return a
}

// Through a private Mosquitto: an agent subscribed at QoS 1 with a
// persistent session that is away when the gate's down/config_request goes
// out (after a status that came before any config, after the gate
// reconnected to its broker, when an administrator asks) gets it when it
// is back, since the broker queues for an absent session what was
// published at QoS 1 or more, never at QoS 0.
func TestConfigRequestReachesAnAgentThatWasAway(t *testing.T) {
	root := homemqtt.DefaultRoot
	for _, tc := range []struct {
		name string
		// ask has the gate send dev a config request while the persistent
		// agent subscribed with id is away; it returns once the request
		// was published (an observer got it).
		ask func(t *testing.T, broker *testenv.Mosquitto, g *homemqtt.Gate, id string)
	}{
		{"status before any config", func(t *testing.T, broker *testenv.Mosquitto, _ *homemqtt.Gate, id string) {
			away(t, broker.URL(), id)
			observer := newAgent(t, broker.URL(), root+"/dev/down/config_request")
			observer.publish(root+"/dev/up/status", lampStatus, false)
			observer.next()
		}},
		{"after the gate reconnected", func(t *testing.T, broker *testenv.Mosquitto, g *homemqtt.Gate, id string) {
			configure(t, broker.URL())
			broker.Stop(os.Kill)
			waitFor(t, "the gate notices the loss", func() bool { return !g.Connected() })
			broker.Start()
			// The restarted broker kept no session: the agent makes its
			// own again before the gate is back (its backoff is a second
			// by now).
			away(t, broker.URL(), id)
			observer := newAgent(t, broker.URL(), root+"/dev/down/config_request")
			if g.Connected() {
				t.Fatal("the gate reconnected before the agent went away: the test proves nothing")
			}
			observer.next()
		}},
		{"an administrator asks", func(t *testing.T, broker *testenv.Mosquitto, g *homemqtt.Gate, id string) {
			away(t, broker.URL(), id)
			if _, err := g.Send(context.Background(), "dev", smarthome.ConfigRequestKind, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broker := testenv.StartMosquitto(t)
			// No second request while the agent is back: the first must
			// have been queued.
			g := startGate(t, homemqtt.WithReaskAfter(homemqtt.Config{Broker: broker.URL()}, time.Hour), seeded(t))
			id := fmt.Sprintf("persistent-%d", time.Now().UnixNano())
			tc.ask(t, broker, g, id)
			back := persistentAgent(t, broker.URL(), id)
			select {
			case m := <-back.got:
				if m.Topic() != root+"/dev/down/config_request" || string(m.Payload()) != "{}" || m.Qos() != 1 {
					t.Fatalf("the agent back got %s %s at QoS %d, want the config request at QoS 1", m.Topic(), m.Payload(), m.Qos())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the agent back did not get the config request sent while it was away")
			}
		})
	}
}

// away makes dev's persistent session under id, subscribed to its
// config requests at QoS 1, and disconnects it: the broker keeps the
// session and queues for it.
func away(t *testing.T, url, id string) {
	t.Helper()
	a := persistentAgent(t, url, id)
	if tok := a.c.Subscribe(homemqtt.DefaultRoot+"/dev/down/config_request", 1, nil); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	a.c.Disconnect(100)
}

// Through a broker: an agent with a clean session (as MQTT-SberGate's) that
// was away when the gate's config request went out, and so never gets it,
// is asked once more when no config answered it in time, and only once; an
// agent that answers is not asked again.
func TestConfigRequestAskedOnceMoreWhenUnanswered(t *testing.T) {
	const wait = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		answer bool
	}{
		{"missed while away: asked once more, once", false},
		{"answered: not asked again", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			root := testRoot(t, url)
			cfg := homemqtt.WithReaskAfter(homemqtt.Config{Broker: url, Root: root}, wait)
			// The re-ask is held as it falls due until the agent has
			// answered (the gate has read its config) or is back, which a
			// loaded machine need not manage within the wait.
			hook, _, release := holdFirstReask(t)
			startGate(t, homemqtt.WithBeforeReask(cfg, hook), seeded(t))
			topic := root + "/dev/down/config_request"
			var a *agent
			if tc.answer {
				states := newAgent(t, url, root+"/dev/down/status_request")
				a = newAgent(t, url, topic)
				a.publish(root+"/dev/up/status", lampStatus, false)
				a.next()
				a.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
				states.next() // the gate has read the config
				release()
			} else {
				observer := newAgent(t, url, topic)
				observer.publish(root+"/dev/up/status", lampStatus, false)
				observer.next()
				a = newAgent(t, url, topic) // back after the request
				release()
				if m := a.next(); m.Topic() != topic {
					t.Fatalf("the agent back got %s %s, want the config request asked again", m.Topic(), m.Payload())
				}
			}
			select {
			case m := <-a.got:
				t.Fatalf("asked again: %s %s", m.Topic(), m.Payload())
			case <-time.After(5 * wait):
			}
		})
	}
}

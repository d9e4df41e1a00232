package homemqtt_test

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// arrival is one message a listener got, stamped when it came.
type arrival struct {
	at             time.Time
	topic, payload string
}

// listen subscribes a client of its own to topics and stamps each message
// it gets with the time it came, so that a test can measure the spacing
// of the gate's requests.
func listen(t *testing.T, url string, topics ...string) (*agent, chan arrival) {
	t.Helper()
	a := newAgent(t, url)
	got := make(chan arrival, 64)
	for _, topic := range topics {
		tok := a.c.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) {
			got <- arrival{at: time.Now(), topic: m.Topic(), payload: string(m.Payload())}
		})
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	return a, got
}

// next is the next arrival on got within 10 s.
func nextArrival(t *testing.T, got <-chan arrival) arrival {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("nothing arrived in 10 s")
		return arrival{}
	}
}

// quiet fails the test when anything arrives on got within d.
func quiet(t *testing.T, got <-chan arrival, d time.Duration, what string) {
	t.Helper()
	select {
	case m := <-got:
		t.Fatalf("%s: %s %s", what, m.topic, m.payload)
	case <-time.After(d):
	}
}

// holdFirstReask returns a hook for homemqtt.WithBeforeReask that holds
// the gate's first re-ask as it falls due, a channel that gets
// a value then, and release, which lets it go (idempotent, and run when
// the test ends). A re-ask is due only once the broker acknowledged the
// request it repeats and the wait passed, so a test that takes the broker
// away between the two knows the first request was taken and the re-ask
// is not, however slowly the machine runs; later re-asks pass at once.
func holdFirstReask(t *testing.T) (hook func(string), due <-chan struct{}, release func()) {
	t.Helper()
	dueC, released := make(chan struct{}, 1), make(chan struct{})
	var first atomic.Bool
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	hook = func(string) {
		if first.CompareAndSwap(false, true) {
			dueC <- struct{}{}
			<-released
		}
	}
	return hook, dueC, release
}

// awaitDue waits up to 10 s for the held re-ask to be due.
func awaitDue(t *testing.T, due <-chan struct{}) {
	t.Helper()
	select {
	case <-due:
	case <-time.After(10 * time.Second):
		t.Fatal("no re-ask was due within 10 s")
	}
}

// reaskSpacing checks that the re-ask came one reask wait after the
// request it repeats: not before most of the wait (the gate starts it when
// the broker took the first request, about when a subscriber gets it) and
// well before the production wait (smarthome.FullConfigWait / 2 = 5 s), so
// that the test's wait is the one that counted, with room for a loaded
// machine.
func reaskSpacing(t *testing.T, first, second arrival, wait time.Duration) {
	t.Helper()
	if gap := second.at.Sub(first.at); gap < wait*3/5 || gap > wait+2*time.Second {
		t.Errorf("re-asked %v after the first request, want about %v (within [%v, %v])", gap, wait, wait*3/5, wait+2*time.Second)
	}
}

// Through a real broker: the gate's own down/config_request, sent after a
// status that came before any config, is asked once more when no config
// answers it within the reask wait, and only once. Then the gate leaves
// the agent alone until a config comes: further statuses ask nothing
// (smarthome.Agent AskConfig), for an agent that answers no request
// would otherwise be asked at every status it sends. An agent that
// answers either request stops the asking and has its devices' states
// asked for; one that went away after the first and is back in time gets
// the second; one that went away for good is asked the second time into
// the void and then no more. The gate cannot tell an agent that left from
// one that stays silent (MQTT tells it nothing of the agent's
// connection), so those two go alike.
func TestGateReasksItsOwnConfigRequestOnce(t *testing.T) {
	const wait = 400 * time.Millisecond
	type env struct {
		t         *testing.T
		url, root string
		// dev is the agent, subscribed to its config requests (own);
		// requests are those an observer subscribed throughout got.
		dev           *agent
		own, requests chan arrival
		// release lets the first re-ask go out; it is held as it is about
		// to, until the case lets it go (at once unless it calls release
		// itself).
		release func()
	}
	for _, tc := range []struct {
		name string
		// run plays the agent after its first status.
		run func(e env)
		// requests is how many config requests the gate sends in all;
		// answered, whether the agent's config answered one, so that its
		// devices' states are asked for.
		requests int
		answered bool
		// holds: the first re-ask is held until run lets it go
		// (env.release) or, at the latest, the answer has been read.
		holds bool
	}{
		{"never answers: asked twice, then left alone", func(e env) {
			nextArrival(e.t, e.requests)
			nextArrival(e.t, e.requests)
		}, 2, false, false},
		{"answers the first: never asked again", func(e env) {
			// The re-ask is held until the gate has read the answer
			// (below), however slowly the machine runs.
			nextArrival(e.t, e.requests)
			e.dev.publish(e.root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
		}, 1, true, true},
		{"answers the second: the asking stops", func(e env) {
			nextArrival(e.t, e.requests)
			nextArrival(e.t, e.requests)
			e.dev.publish(e.root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
		}, 2, true, false},
		{"keeps sending statuses: still asked twice only", func(e env) {
			nextArrival(e.t, e.requests)
			for range 3 {
				e.dev.publish(e.root+"/dev/up/status", lampStatus, false)
			}
			nextArrival(e.t, e.requests)
			for range 3 {
				time.Sleep(wait / 2)
				e.dev.publish(e.root+"/dev/up/status", lampStatus, false)
			}
		}, 2, false, false},
		{"away after the first, back in time: the second reaches it and is answered", func(e env) {
			// The agent has a clean session, as MQTT-SberGate's: what is
			// published while it is away is lost to it. It is back before
			// the re-ask goes out, which is held until then: a connection
			// and a subscription on a loaded machine need not fit in the
			// wait.
			nextArrival(e.t, e.own)
			e.dev.c.Disconnect(0)
			back, again := listen(e.t, e.url, e.root+"/dev/down/config_request")
			e.release()
			nextArrival(e.t, again)
			back.publish(e.root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
		}, 2, true, true},
		{"away for good after the first: asked once more, then no more", func(e env) {
			nextArrival(e.t, e.requests)
			e.dev.c.Disconnect(0)
			nextArrival(e.t, e.requests)
		}, 2, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			root := testRoot(t, url)
			reg := prometheus.NewRegistry()
			var recs records
			hook, _, release := holdFirstReask(t)
			startGate(t, homemqtt.WithBeforeReask(homemqtt.WithReaskAfter(homemqtt.Config{Broker: url, Root: root, Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg)}, wait), hook), seeded(t))
			_, requests := listen(t, url, root+"/dev/down/config_request")
			_, all := listen(t, url, root+"/dev/down/config_request")
			_, states := listen(t, url, root+"/dev/down/status_request")
			dev, own := listen(t, url, root+"/dev/down/config_request")
			if !tc.holds {
				release()
			}
			dev.publish(root+"/dev/up/status", lampStatus, false)
			tc.run(env{t: t, url: url, root: root, dev: dev, own: own, requests: requests, release: release})
			if tc.answered {
				if m := nextArrival(t, states); m.payload != `{"devices":["lamp"]}` {
					t.Fatalf("status_request after the answer: %s", m.payload)
				}
			}
			release() // the gate has read any answer: a re-ask held goes on to its checks

			// What an observer subscribed throughout got, after several
			// waits in which no third request and none after an answer came.
			time.Sleep(4 * wait)
			var asked []arrival
			for len(all) > 0 {
				asked = append(asked, <-all)
			}
			if len(asked) != tc.requests {
				t.Fatalf("%d config requests, want %d (%s)", len(asked), tc.requests, spacings(asked))
			}
			for i := range asked {
				if asked[i].topic != root+"/dev/down/config_request" || asked[i].payload != "{}" {
					t.Fatalf("request %d: %s %s, want the config request", i+1, asked[i].topic, asked[i].payload)
				}
			}
			if len(asked) == 2 {
				reaskSpacing(t, asked[0], asked[1], wait)
			}
			quiet(t, states, 0, "states asked for without a config")

			// One line says why the gate asks again, with the agent and the
			// wait; nothing was dropped.
			if n, levels := recs.count("asking once more"); n != tc.requests-1 || levels[slog.LevelInfo] != n {
				t.Errorf("%d re-ask lines (levels %v), want %d at INFO", n, levels, tc.requests-1)
			}
			if len(asked) == 2 {
				if got := attrsOf(&recs, "asking once more"); got["agent"] != "dev" || got["after"] != wait.String() {
					t.Errorf("re-ask line attributes %v, want agent dev and after %v", got, wait)
				}
			}
			for _, reason := range []string{"unreachable", "unacknowledged"} {
				if v := metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=config_request,reason="+reason); v != 0 {
					t.Errorf("dropped config requests (%s): %v, want 0", reason, v)
				}
			}
		})
	}
}

// attrsOf is the attributes of the last record whose message contains msg.
func attrsOf(r *records, msg string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := map[string]string{}
	for _, rec := range r.recs {
		if !strings.Contains(rec.Message, msg) {
			continue
		}
		clear(got)
		rec.Attrs(func(a slog.Attr) bool {
			got[a.Key] = a.Value.String()
			return true
		})
	}
	return got
}

// spacings describes when each arrival came, after the first.
func spacings(got []arrival) string {
	var b strings.Builder
	for i, m := range got {
		fmt.Fprintf(&b, "#%d at +%v; ", i+1, m.at.Sub(got[0].at).Round(time.Millisecond))
	}
	return b.String()
}

// Through a real broker: the gate's down/status_request, which it sends
// after each config it could read, is never asked again. It goes out at
// QoS 0 and nothing tracks its answer: the agent's statuses come by
// themselves whenever a state changes, and its next config asks again.
func TestGateAsksForStatesOncePerConfig(t *testing.T) {
	const wait = 300 * time.Millisecond
	url := testenv.MQTTBroker(t)
	root := testRoot(t, url)
	startGate(t, homemqtt.WithReaskAfter(homemqtt.Config{Broker: url, Root: root}, wait), seeded(t))
	_, got := listen(t, url, root+"/dev/down/status_request", root+"/dev/down/config_request")
	dev := newAgent(t, url)
	for i := range 2 {
		dev.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
		if m := nextArrival(t, got); m.topic != root+"/dev/down/status_request" || m.payload != `{"devices":["lamp"]}` {
			t.Fatalf("after config %d: %s %s, want the status request", i+1, m.topic, m.payload)
		}
		quiet(t, got, 4*wait, "asked again with no status answering")
	}
}

// Through a private Mosquitto: the gate's re-ask that the broker does not
// take within the gate's wait for it (5 s; the broker frozen by SIGSTOP,
// its connection open) is withdrawn, counted in
// partnerapi_smarthome_mqtt_dropped_total{topic="config_request",
// reason="unacknowledged"} and logged at WARN, and asks nothing further:
// the re-ask is the last request the gate sends by itself.
func TestGateDropsAReaskTheBrokerDoesNotTake(t *testing.T) {
	const wait = time.Second
	broker := testenv.StartMosquitto(t)
	reg := prometheus.NewRegistry()
	var recs records
	hold, due, release := holdFirstReask(t)
	cfg := homemqtt.WithReaskAfter(homemqtt.Config{Broker: broker.URL(), Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg)}, wait)
	startGate(t, homemqtt.WithBeforeReask(cfg, hold), seeded(t))
	root := homemqtt.DefaultRoot
	dropped := func(reason string) float64 {
		return metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=config_request,reason="+reason)
	}
	_, got := listen(t, broker.URL(), root+"/dev/down/config_request")
	newAgent(t, broker.URL()).publish(root+"/dev/up/status", lampStatus, false)
	nextArrival(t, got)
	// The re-ask is due only once the broker acknowledged the first
	// request; it is held there until the broker is frozen.
	awaitDue(t, due)
	broker.Freeze()
	release()
	thawed := false
	thaw := func() {
		if !thawed {
			broker.Thaw()
			thawed = true
		}
	}
	t.Cleanup(thaw)
	waitFor(t, "the re-ask dropped as unacknowledged", func() bool { return dropped("unacknowledged") == 1 })
	if n, _ := recs.count("asking once more"); n != 1 {
		t.Errorf("%d re-ask lines, want 1", n)
	}
	const line = "the broker did not take the gate's config request in time"
	if n, levels := recs.count(line); n != 1 || levels[slog.LevelWarn] != 1 {
		t.Errorf("%d lines %q (levels %v), want 1 at WARN", n, line, levels)
	}
	if a := attrsOf(&recs, line); a["agent"] != "dev" || a["wait"] != "5s" {
		t.Errorf("the drop's line says %v, want agent dev and wait 5s", a)
	}
	thaw()
	// The withdrawn re-ask was written to the frozen broker's socket
	// already: the broker may deliver it once it runs again. Nothing
	// follows it.
	var after []arrival
	for end := time.After(4 * wait); ; {
		select {
		case m := <-got:
			after = append(after, m)
			continue
		case <-end:
		}
		break
	}
	if len(after) > 1 {
		t.Errorf("%d config requests after the broker ran again, want the withdrawn one at most", len(after))
	}
	if u, a := dropped("unreachable"), dropped("unacknowledged"); u != 0 || a != 1 {
		t.Errorf("dropped config requests: unreachable %v, unacknowledged %v; want 0 and 1", u, a)
	}
}

// Through a private Mosquitto: a re-ask due while the gate has lost its
// broker is dropped at once, counted as unreachable and logged; the
// gate's reconnection then asks the agent again (resync), and that
// request, unanswered too, is asked once more and no more: each
// reconnection costs a silent agent two requests, never more.
func TestGateReaskWhileItsBrokerIsAway(t *testing.T) {
	const wait = time.Second
	broker := testenv.StartMosquitto(t)
	reg := prometheus.NewRegistry()
	var recs records
	hold, due, release := holdFirstReask(t)
	cfg := homemqtt.WithReaskAfter(homemqtt.Config{Broker: broker.URL(), Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg)}, wait)
	g := startGate(t, homemqtt.WithBeforeReask(cfg, hold), seeded(t))
	root := homemqtt.DefaultRoot
	dropped := func(reason string) float64 {
		return metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=config_request,reason="+reason)
	}
	_, got := listen(t, broker.URL(), root+"/dev/down/config_request")
	newAgent(t, broker.URL()).publish(root+"/dev/up/status", lampStatus, false)
	nextArrival(t, got)
	// The first request acknowledged and its re-ask held, as above, until
	// the gate has seen its broker go.
	awaitDue(t, due)
	broker.Stop(os.Kill)
	waitFor(t, "the gate sees its broker gone", func() bool { return !g.Connected() })
	release()
	waitFor(t, "the re-ask dropped as unreachable", func() bool { return dropped("unreachable") == 1 })
	if g.Connected() {
		t.Fatal("the gate is connected with its broker stopped")
	}
	if n, levels := recs.count("broker unreachable, message dropped"); n != 1 || levels[slog.LevelWarn] != 1 {
		t.Errorf("%d unreachable lines (levels %v), want 1 at WARN", n, levels)
	}
	if a := attrsOf(&recs, "broker unreachable, message dropped"); a["agent"] != "dev" || a["topic"] != "down/config_request" {
		t.Errorf("the drop's line says %v, want agent dev and topic down/config_request", a)
	}
	broker.Start()
	// Subscribed before the gate is back (its backoff is a second by
	// now), so that the resync's request is seen.
	_, again := listen(t, broker.URL(), root+"/dev/down/config_request")
	if g.Connected() {
		t.Fatal("the gate reconnected before the observer subscribed: its request could go unseen")
	}
	first, second := nextArrival(t, again), nextArrival(t, again)
	reaskSpacing(t, first, second, wait)
	quiet(t, again, 4*wait, "asked a third time after the reconnection")
	if u, a := dropped("unreachable"), dropped("unacknowledged"); u != 1 || a != 0 {
		t.Errorf("dropped config requests: unreachable %v, unacknowledged %v; want 1 and 0", u, a)
	}
}

package homemqtt_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// records is a slog.Handler that keeps every record, Debug included, so a
// test can count what the gate said and at which level.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

// count is how many records contain msg, and at which levels.
func (r *records) count(msg string) (n int, levels map[slog.Level]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	levels = map[slog.Level]int{}
	for _, rec := range r.recs {
		if strings.Contains(rec.Message, msg) {
			n++
			levels[rec.Level]++
		}
	}
	return n, levels
}

// metric is the value of the series name in reg with the labels, if any,
// given as "name=value" pairs separated by commas; -1 when it is absent.
func metric(t *testing.T, reg *prometheus.Registry, name, labels string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if !hasLabels(got, labels) {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// hasLabels reports whether the series' labels include every
// "name=value" pair of want (comma-separated; "" for none).
func hasLabels(got map[string]string, want string) bool {
	if want == "" {
		return true
	}
	for _, pair := range strings.Split(want, ",") {
		name, value, _ := strings.Cut(pair, "=")
		if v, ok := got[name]; !ok || v != value {
			return false
		}
	}
	return true
}

// waitFor polls cond for up to 30 s: recovery is checked, not its latency.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}

const lampOn = `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`

// configure has a fresh agent (the restarted broker knows none of the
// earlier ones' subscriptions) publish dev's config with the lamp and
// waits for the gate's status_request, which shows that the gate hears
// agents again and can answer them.
func configure(t *testing.T, url string) *agent {
	t.Helper()
	root := homemqtt.DefaultRoot
	a := newAgent(t, url, root+"/dev/down/status_request", root+"/dev/down/commands", root+"/dev/down/errors")
	a.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
	if m := a.next(); m.Topic() != root+"/dev/down/status_request" || string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("after the config: %s %q, want the lamp's status_request", m.Topic(), m.Payload())
	}
	return a
}

// Through a private Mosquitto that crashes (SIGKILL) and then stops in
// order (SIGTERM), each time restarting without persistence: the gate
// notices the loss (Connected, the gauge), refuses a command meanwhile
// instead of queueing it, reconnects by itself, subscribes again (its
// session is clean, the new broker has no subscription for it), announces
// the endpoint again (the retained message is gone too) and answers
// agents and sends commands as before. The loss and the recovery are
// logged once each, at WARN and INFO; the retries only at DEBUG.
func TestGateAcrossBrokerRestarts(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	url := broker.URL()
	reg := prometheus.NewRegistry()
	logs := &records{}
	g := startGate(t, homemqtt.Config{Broker: url, Log: slog.New(logs), Metrics: homemqtt.NewMetrics(reg)}, seeded(t))
	if v := metric(t, reg, "partnerapi_smarthome_mqtt_connected", ""); v != 1 {
		t.Fatalf("connected gauge %v at start, want 1", v)
	}
	configure(t, url)
	for i, sig := range []os.Signal{os.Kill, syscall.SIGTERM} {
		broker.Stop(sig)
		waitFor(t, sig.String()+": the gate notices the loss", func() bool { return !g.Connected() })
		if v := metric(t, reg, "partnerapi_smarthome_mqtt_connected", ""); v != 0 {
			t.Fatalf("%v: connected gauge %v while the broker is down, want 0", sig, v)
		}
		_, err := g.Command(context.Background(), "dev", []byte(lampOn))
		if !errors.Is(err, homemqtt.ErrBrokerDown) || !errors.Is(err, smarthome.ErrGateDown) {
			t.Fatalf("%v: command while the broker is down: %v, want ErrBrokerDown (the admin API's 503)", sig, err)
		}
		broker.Start()
		waitFor(t, sig.String()+": the gate reconnects", g.Connected)
		// The retained announcement is back on the new broker.
		waitFor(t, sig.String()+": retained __config", func() bool {
			cfg := newAgent(t, url, homemqtt.DefaultRoot+"/__config")
			select {
			case m := <-cfg.got:
				return m.Retained() && strings.Contains(string(m.Payload()), "http://127.0.0.1:9445")
			case <-time.After(500 * time.Millisecond):
				return false
			}
		})
		a := configure(t, url)
		topic, err := g.Command(context.Background(), "dev", []byte(lampOn))
		if err != nil {
			t.Fatalf("%v: command after the restart: %v", sig, err)
		}
		if m := a.next(); m.Topic() != topic || !strings.Contains(string(m.Payload()), `"bool_value":true`) {
			t.Fatalf("%v: the agent got %s %q, want the command", sig, m.Topic(), m.Payload())
		}
		a.publish(homemqtt.DefaultRoot+"/dev/up/config", `{"devices": nope}`, false)
		if m := a.next(); !strings.HasSuffix(m.Topic(), "/down/errors") {
			t.Fatalf("%v: a malformed config got %s %q, want down/errors", sig, m.Topic(), m.Payload())
		}
		if v := metric(t, reg, "partnerapi_smarthome_mqtt_reconnects_total", ""); v != float64(i+1) {
			t.Fatalf("%v: reconnects_total %v, want %d", sig, v, i+1)
		}
	}
	if v := metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=commands,reason=unreachable"); v != 2 {
		t.Errorf("dropped_total{topic=commands,reason=unreachable} %v, want the 2 refused commands", v)
	}
	if n, lv := logs.count("connection to the broker lost"); n != 2 || lv[slog.LevelWarn] != 2 {
		t.Errorf("loss logged %d times %v, want twice at WARN", n, lv)
	}
	if n, lv := logs.count("gate reconnected"); n != 2 || lv[slog.LevelInfo] != 2 {
		t.Errorf("recovery logged %d times %v, want twice at INFO", n, lv)
	}
	if n, lv := logs.count("smarthome mqtt: reconnecting"); n != lv[slog.LevelDebug] {
		t.Errorf("reconnection attempts logged %v, want DEBUG only", lv)
	}
	if _, lv := logs.count(""); lv[slog.LevelError] != 0 {
		t.Errorf("%d ERROR records across broker restarts", lv[slog.LevelError])
	}
}

// A command the broker does not acknowledge (a frozen broker: SIGSTOP
// keeps the connection open and answers nothing) is refused after the
// gate's wait and withdrawn: when the broker is replaced and the gate
// reconnects, the client library does not resend it from its outgoing
// store, which would switch the device long after the administrator was
// told the command failed. The command sent after the reconnection is the
// only one the agent gets.
func TestCommandNotReplayed(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	url := broker.URL()
	g := startGate(t, homemqtt.Config{Broker: url}, seeded(t))
	configure(t, url)
	broker.Freeze()
	stale := `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":false}}]}}}`
	if _, err := g.Command(context.Background(), "dev", []byte(stale)); !errors.Is(err, smarthome.ErrGateDown) {
		t.Fatalf("command to a frozen broker: %v, want the gate's unavailability (503)", err)
	}
	broker.Stop(os.Kill)
	waitFor(t, "the gate notices the loss", func() bool { return !g.Connected() })
	broker.Start()
	// Subscribe before the gate is back (its backoff is a second or more
	// by now), so that a replayed command would arrive.
	a := newAgent(t, url, homemqtt.DefaultRoot+"/dev/down/commands")
	if g.Connected() {
		t.Fatal("the gate reconnected before the agent subscribed: a replay could go unseen")
	}
	waitFor(t, "the gate reconnects", g.Connected)
	if _, err := g.Command(context.Background(), "dev", []byte(lampOn)); err != nil {
		t.Fatalf("command after the reconnection: %v", err)
	}
	// What the agent gets up to the command sent after the reconnection
	// (waited for up to 10 s: the broker forwards it after acknowledging
	// it, when a loaded machine lets it), and for a second after: a
	// replay of the stale command, resent on the reconnection, comes
	// before or around it. A fixed second for both would let a late
	// delivery of the fresh command fail the test.
	var got []string
	fresh := false
	for deadline := time.After(10 * time.Second); !fresh; {
		select {
		case m := <-a.got:
			got = append(got, string(m.Payload()))
			fresh = strings.Contains(got[len(got)-1], `"bool_value":true`)
			continue
		case <-deadline:
		}
		break
	}
	for deadline := time.After(time.Second); fresh; {
		select {
		case m := <-a.got:
			got = append(got, string(m.Payload()))
			continue
		case <-deadline:
		}
		break
	}
	if len(got) != 1 || !strings.Contains(got[0], `"bool_value":true`) {
		t.Fatalf("the agent got %q, want only the command sent after the reconnection", got)
	}
}

// A broker that stays up but drops the gate's connection (here: another
// client connecting with the gate's client id, which Mosquitto answers by
// closing the older session) sees the gate back at once: the client
// library then reconnects without waiting, and may run the loss handler
// only after the new connection is open, which must not leave the gate
// counted as disconnected (it would refuse every command) while it serves.
func TestGateKickedByBroker(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	url := broker.URL()
	id := "gate-kicked-" + time.Now().Format("150405.000000000")
	g := startGate(t, homemqtt.Config{Broker: url, ClientID: id}, seeded(t))
	configure(t, url)
	for i := range 3 {
		rogue := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(id).SetAutoReconnect(false))
		if tok := rogue.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("rogue connect: %v", tok.Error())
		}
		rogue.Disconnect(0)
		waitFor(t, fmt.Sprintf("kick %d: the gate serves again", i), func() bool {
			if !g.Connected() {
				return false
			}
			_, err := g.Command(context.Background(), "dev", []byte(lampOn))
			return err == nil
		})
	}
}

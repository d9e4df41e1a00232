package homemqtt_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// Through a private Mosquitto: partnerapi_smarthome_mqtt_dropped_total
// tells why a message did not reach the broker. A config request a frozen
// broker (SIGSTOP: the connection stays open, nothing is acknowledged)
// does not take in time counts as unacknowledged, a command while the
// broker is gone as unreachable; each under its topic only, every series
// there from the start, and the help text names both reasons.
func TestDroppedCountsByReason(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	reg := prometheus.NewRegistry()
	g := startGate(t, homemqtt.Config{Broker: broker.URL(), Metrics: homemqtt.NewMetrics(reg)}, seeded(t))
	configure(t, broker.URL())
	const name = "partnerapi_smarthome_mqtt_dropped_total"
	dropped := func(topic, reason string) float64 {
		return metric(t, reg, name, "topic="+topic+",reason="+reason)
	}
	for _, topic := range []string{"commands", "errors", "status_request", "config_request", "rename_device_request", "change_group_device_request"} {
		if v := dropped(topic, "unreachable"); v != 0 {
			t.Errorf("%s{topic=%s,reason=unreachable} %v at start, want 0", name, topic, v)
		}
		want := 0.0
		if topic == "status_request" {
			want = -1 // sent at QoS 0: never acknowledged, never counted so
		}
		if v := dropped(topic, "unacknowledged"); v != want {
			t.Errorf("%s{topic=%s,reason=unacknowledged} %v at start, want %v", name, topic, v, want)
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && (!strings.Contains(f.GetHelp(), "unreachable") || !strings.Contains(f.GetHelp(), "unacknowledged")) {
			t.Errorf("help text names only some reasons: %q", f.GetHelp())
		}
	}

	broker.Freeze()
	if _, err := g.Send(context.Background(), "dev", smarthome.ConfigRequestKind, []byte(`{}`)); !errors.Is(err, smarthome.ErrGateDown) {
		t.Fatalf("config request to a frozen broker: %v, want the gate's unavailability (503)", err)
	}
	if u, a := dropped("config_request", "unreachable"), dropped("config_request", "unacknowledged"); u != 0 || a != 1 {
		t.Errorf("after a config request the broker did not acknowledge: unreachable %v, unacknowledged %v; want 0 and 1", u, a)
	}

	broker.Stop(os.Kill)
	waitFor(t, "the gate notices the loss", func() bool { return !g.Connected() })
	if _, err := g.Command(context.Background(), "dev", []byte(lampOn)); !errors.Is(err, homemqtt.ErrBrokerDown) {
		t.Fatalf("command while the broker is gone: %v, want ErrBrokerDown", err)
	}
	if u, a := dropped("commands", "unreachable"), dropped("commands", "unacknowledged"); u != 1 || a != 0 {
		t.Errorf("after a command while the broker was gone: unreachable %v, unacknowledged %v; want 1 and 0", u, a)
	}
	if v := dropped("config_request", "unacknowledged"); v != 1 {
		t.Errorf("config_request unacknowledged %v after the command, want still 1", v)
	}
}

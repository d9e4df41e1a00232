package homemqtt_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/testenv"
)

// A read of the catalog that the database never answers (here: every
// reader connection of the real SQLite store held by a read that does not
// end) fails at the gate's CatalogTimeout, and the agent's message is held
// as in an outage, a later one queued behind it, instead of holding the
// client library's one message goroutine, and every message after it, for
// as long as the database does not answer. Once the database answers, the
// held messages are checked and answered in order. Before the bound the
// catalog was read with context.Background(): nothing was ever held, and
// no message was answered until a connection came back.
func TestGateHoldsMessagesWhenTheCatalogReadHangs(t *testing.T) {
	url := testenv.MQTTBroker(t)
	db := homeDB(t)
	reg := prometheus.NewRegistry()
	var logs testenv.LogBuffer
	root := testRoot(t, url)
	startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: homemqtt.NewMetrics(reg),
		CatalogTimeout: 300 * time.Millisecond}, readingService(t, homesql.New(db)))

	dev := newAgent(t, url, root+"/dev/down/errors")
	release := testenv.HoldReaders(t, db.R, 8)
	defer release()
	for i := range 2 {
		dev.publish(root+"/dev/up/status", fmt.Sprintf(`{"devices":{"d%d":{"states":[{"key":"on_off","value":{"type":"INTEGER","integer_value":"1"}}]}}}`, i), false)
	}
	held := func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 2 }
	for deadline := time.Now().Add(10 * time.Second); !held(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("the messages were not held within 10 s of a catalog read that hangs (held %v)", metric(t, reg, "partnerapi_smarthome_mqtt_held", ""))
		}
	}
	if line := "smarthome mqtt: catalog unavailable; holding agent messages until it can be read"; !strings.Contains(logs.String(), line) ||
		!strings.Contains(logs.String(), "deadline exceeded") {
		t.Fatalf("no WARN line naming the catalog read's deadline:\n%s", logs.String())
	}
	select {
	case m := <-dev.got:
		t.Fatalf("answered while the catalog could not be read: %s", m.Payload())
	default:
	}

	release()
	for i := range 2 {
		if m := dev.next(); !strings.Contains(string(m.Payload()), fmt.Sprintf(`"id":"d%d"`, i)) {
			t.Fatalf("answer %d: %s, want one about d%d", i, m.Payload(), i)
		}
	}
	waitFor(t, "nothing held", func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 0 })
}

package homemqtt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// outageStore is the real SQLite store whose database goes down on demand:
// its change check fails with the error of a real connect to a closed port.
type outageStore struct {
	smarthome.Store
	down atomic.Bool
	err  error
}

func (s *outageStore) Stamp(ctx context.Context) (smarthome.Stamp, error) {
	if s.down.Load() {
		return smarthome.Stamp{}, s.err
	}
	return s.Store.Stamp(ctx)
}

// flappingStore is outageStore that, once flapping, fails every
// flapEvery-th change check: the store goes down under a stream of
// messages at points the reads decide, however the scheduler runs the
// gate, and comes back at the next check.
type flappingStore struct {
	outageStore
	flapping atomic.Bool
	checks   atomic.Int64
	failed   atomic.Int64
}

const flapEvery = 7

func (s *flappingStore) Stamp(ctx context.Context) (smarthome.Stamp, error) {
	if s.flapping.Load() && s.checks.Add(1)%flapEvery == 0 {
		s.failed.Add(1)
		return smarthome.Stamp{}, s.err
	}
	return s.Store.Stamp(ctx)
}

// homeDB is a fresh SQLite database with the smarthome schema.
func homeDB(t *testing.T) *sqldb.DB {
	t.Helper()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// readingService is the service over store, started, whose recheck is so
// short that every read of the catalog asks the store: a store that stops
// answering shows at the gate's next message.
func readingService(t *testing.T, store smarthome.Store) *smarthome.Service {
	t.Helper()
	svc := smarthome.NewServiceRecheck(store, time.Nanosecond)
	if err := svc.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}

// An agent's config and status that arrive while the catalog's store is
// down are held, not dropped, and checked in the order they came once the
// store is back: the status is judged against the model of the config that
// came before it (a feature the configured model lacks is a finding, which
// the whole catalog would not find), the config gets its status_request,
// the gauge shows what is held meanwhile and nothing is answered before
// the store is back.
func TestGateHoldsAgentMessagesWhileTheCatalogIsDown(t *testing.T) {
	url := testenv.MQTTBroker(t)
	store := &outageStore{Store: homesql.New(homeDB(t)), err: storetest.UnavailableError(t)}
	reg := prometheus.NewRegistry()
	var logs testenv.LogBuffer
	root := testRoot(t, url)
	startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: homemqtt.NewMetrics(reg)},
		readingService(t, store))

	dev := newAgent(t, url, root+"/dev/down/errors", root+"/dev/down/status_request", root+"/dev/down/config_request")
	store.down.Store(true)
	const onOffLamp = `{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m2","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
	dev.publish(root+"/dev/up/config", `{"devices":[`+onOffLamp+`]}`, false)
	dev.publish(root+"/dev/up/status", `{"devices":{"lamp":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":"500"}}]}}}`, false)
	waitFor(t, "two messages held", func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 2 })
	select {
	case m := <-dev.got:
		t.Fatalf("answered while the catalog is down: %s %s", m.Topic(), m.Payload())
	case <-time.After(300 * time.Millisecond):
	}

	store.down.Store(false)
	if m := dev.next(); m.Topic() != root+"/dev/down/status_request" || string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("first answer after the store came back: %s %s, want the config's status_request", m.Topic(), m.Payload())
	}
	if m := dev.next(); m.Topic() != root+"/dev/down/errors" || !strings.Contains(string(m.Payload()), `"category":"light","errors":[],"unknown_features":["light_brightness"]`) {
		t.Fatalf("second answer: %s %s, want the status's finding against the held config's model", m.Topic(), m.Payload())
	}
	waitFor(t, "nothing held", func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 0 })
	if v := metric(t, reg, "partnerapi_smarthome_mqtt_held_dropped_total", ""); v != 0 {
		t.Errorf("held_dropped_total %v, want 0", v)
	}
	if line := "level=WARN msg=\"smarthome mqtt: catalog unavailable; holding agent messages until it can be read\""; !strings.Contains(logs.String(), line) {
		t.Errorf("no %s in the log:\n%s", line, logs.String())
	}
	// The gauge drops to 0 as the last held message leaves the queue; the
	// line that reports the recovery comes after it, so it is waited for.
	recovered := "level=INFO msg=\"smarthome mqtt: catalog readable again; held agent messages checked\" checked=2 still_held=0 dropped=0"
	waitFor(t, "the recovery's log line "+recovered, func() bool { return strings.Contains(logs.String(), recovered) })
	if strings.Contains(logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs.String())
	}

	// Back to normal: a message is checked at once.
	dev.publish(root+"/dev/up/config", `{"devices": nope}`, false)
	if m := dev.next(); m.Topic() != root+"/dev/down/errors" {
		t.Fatalf("answer after recovery: %s %s", m.Topic(), m.Payload())
	}
}

// While the catalog's store comes and goes under a stream of one agent's
// messages, every message is answered once, in the order it was sent:
// messages checked at once, held, and checked once the store is back do
// not overtake each other at the boundaries.
func TestGateKeepsOrderWhileTheCatalogFlaps(t *testing.T) {
	url := testenv.MQTTBroker(t)
	store := &flappingStore{outageStore: outageStore{Store: homesql.New(homeDB(t)), err: storetest.UnavailableError(t)}}
	root := testRoot(t, url)
	var logs testenv.LogBuffer
	startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil))}, readingService(t, store))

	const n = 60
	dev := newAgent(t, url, root+"/dev/down/errors")
	// Every flapEvery-th read of the catalog fails from here on: a
	// message checked at once, a retry of the held ones, or one checked
	// while they drain, whichever comes at that count.
	store.flapping.Store(true)
	for i := range n {
		// A BOOL feature sent as an INTEGER: each message has one finding,
		// answered on down/errors naming its device.
		dev.publish(root+"/dev/up/status", fmt.Sprintf(`{"devices":{"d%02d":{"states":[{"key":"on_off","value":{"type":"INTEGER","integer_value":"1"}}]}}}`, i), false)
		// A pace, so that new messages also arrive while others are
		// held or drain; the assertions do not depend on it.
		time.Sleep(2 * time.Millisecond)
	}
	for i := range n {
		var msg homemqtt.Message
		if err := json.Unmarshal(dev.next().Payload(), &msg); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("d%02d", i); len(msg.Devices) != 1 || msg.Devices[0].ID != want {
			t.Fatalf("answer %d is about %+v, want %s", i, msg.Devices, want)
		}
	}
	select {
	case m := <-dev.got:
		t.Fatalf("an answer too many: %s", m.Payload())
	case <-time.After(300 * time.Millisecond):
	}
	// Sixty messages read the catalog sixty times at least, so the store
	// went down under the stream, and a failed read holds a message.
	if store.failed.Load() == 0 {
		t.Fatalf("the store never failed under %d messages (%d reads)", n, store.checks.Load())
	}
	if !strings.Contains(logs.String(), "holding agent messages until it can be read") {
		t.Errorf("no message was held, %d reads failing:\n%s", store.failed.Load(), logs.String())
	}
}

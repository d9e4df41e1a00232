package homemqtt_test

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/leaktest"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// Through a real broker: the gate's config requests to many agents that
// never answer leave nothing behind once the gate closes, whether it
// closes after every re-ask went out or with the re-asks still due. Each
// request holds a goroutine only until the broker takes it, and neither a
// request still in flight when Close ends the connection (the client
// library fails it then) nor a re-ask due after Close counts or logs as
// dropped: the gate left the broker on purpose.
func TestGateReasksLeaveNothingBehind(t *testing.T) {
	const (
		wait   = 500 * time.Millisecond
		agents = 20
	)
	for _, tc := range []struct {
		name string
		// reasked: the gate closes after the re-asks went out, else
		// right after the first requests, with the re-asks due.
		reasked bool
	}{
		{"closed after the re-asks", true},
		{"closed with the re-asks due", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			base := leaktest.Settled(3 * time.Second)
			reg := prometheus.NewRegistry()
			var recs records
			t.Run("traffic", func(t *testing.T) {
				root := testRoot(t, url)
				cfg := homemqtt.WithReaskAfter(homemqtt.Config{Broker: url, Root: root, Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg)}, wait)
				// With the re-asks due at Close, each one that falls due
				// before Close is held until Close has begun: the twenty
				// requests took longer than the wait to come through on a
				// loaded machine (0.65 s under CPU load, 2026-12-01), and
				// re-asks then went out before Close, which the test
				// counted as re-asks after it.
				held, release := make(chan struct{}), sync.OnceFunc(func() {})
				if !tc.reasked {
					release = sync.OnceFunc(func() { close(held) })
					t.Cleanup(release)
					cfg = homemqtt.WithBeforeReask(cfg, func(string) { <-held })
				}
				g := startGate(t, cfg, seeded(t))
				_, got := listen(t, url, root+"/+/down/config_request")
				dev := newAgent(t, url)
				for i := range agents {
					dev.publish(fmt.Sprintf("%s/dev%d/up/status", root, i), lampStatus, false)
				}
				want := agents
				if tc.reasked {
					want *= 2
				}
				for range want {
					nextArrival(t, got)
				}
				closeReleasing(t, g, release)
			})
			// Past the re-asks' due time: the ones due after Close have
			// fired by now.
			time.Sleep(2 * wait)
			if n, _ := recs.count("asking once more"); tc.reasked && n != agents || !tc.reasked && n != 0 {
				t.Errorf("%d re-ask lines, want %d", n, map[bool]int{true: agents}[tc.reasked])
			}
			for _, reason := range []string{"unreachable", "unacknowledged"} {
				if v := metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=config_request,reason="+reason); v != 0 {
					t.Errorf("dropped config requests (%s): %v, want 0", reason, v)
				}
			}
			leaktest.WaitBack(t, base, leaktest.Slack{Goroutines: 4, FDs: 4}, 15*time.Second)
		})
	}
}

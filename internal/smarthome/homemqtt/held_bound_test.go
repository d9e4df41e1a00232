package homemqtt

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"partnerapi/internal/testenv"
)

// What the gate holds for a catalog that cannot be read stays within its
// bounds: beyond maxHeld messages the oldest is dropped, counted and
// logged, never the one being checked (busy); a message larger than
// maxHeldBytes is dropped alone instead of pushing out all the others; the
// bytes bound drops the oldest as the count bound does.
func TestHeldMessagesAreBounded(t *testing.T) {
	var logs testenv.LogBuffer
	g := &Gate{cfg: Config{Log: slog.New(slog.NewTextHandler(&logs, nil))}, m: NewMetrics(prometheus.NewRegistry())}
	g.held.wake = make(chan struct{}, 1)
	value := func(c prometheus.Collector) float64 {
		ch := make(chan prometheus.Metric, 1)
		c.Collect(ch)
		var m dto.Metric
		if err := (<-ch).Write(&m); err != nil {
			t.Fatal(err)
		}
		if m.Gauge != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	hold := func(agent string, size int) {
		g.held.Lock()
		defer g.held.Unlock()
		g.holdLocked(heldMessage{agent: agent, kind: "status", payload: make([]byte, size)}, errors.New("down"))
	}
	check := func(what string, n int, first, second string, dropped float64) {
		t.Helper()
		q := g.held.queue
		if len(q) != n || q[0].agent != first || q[1].agent != second || value(g.m.held) != float64(n) || value(g.m.heldDropped) != dropped {
			t.Fatalf("%s: %d held from %s, %s; gauge %v, dropped %v; want %d from %s, %s, dropped %v",
				what, len(q), q[0].agent, q[1].agent, value(g.m.held), value(g.m.heldDropped), n, first, second, dropped)
		}
	}
	for i := range maxHeld + 1 {
		hold(fmt.Sprint("a", i), 10)
	}
	check("one over the count", maxHeld, "a1", "a2", 1)

	g.held.busy = true
	hold("b", 10)
	check("one over while the first is checked", maxHeld, "a1", "a3", 2)
	g.held.busy = false

	hold("huge", maxHeldBytes+1)
	check("one over the bytes on its own", maxHeld, "a1", "a3", 3)

	hold("big", maxHeldBytes-5*10)
	if q := g.held.queue; len(q) != 6 || q[0].agent != "a997" || q[5].agent != "big" || g.held.count[registeredBound].bytes > maxHeldBytes {
		t.Fatalf("over the bytes: %d held from %s to %s, %d bytes", len(q), q[0].agent, q[len(q)-1].agent, g.held.count[registeredBound].bytes)
	}
	// One WARN line for the outage, not one per message: the count is in
	// the metric.
	if n := strings.Count(logs.String(), "level=WARN msg=\"smarthome mqtt: too many agent messages held for the catalog; the oldest is dropped\""); n != 1 || g.held.dropped != 998 {
		t.Errorf("%d WARN lines about dropping the oldest, %d counted for the recovery line; want 1 and 998", n, g.held.dropped)
	}
}

package homemqtt_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// gatedCatalog is the real service's catalog that can fail (as when its
// store is down) or stop until the test lets it go on or the read's
// context ends (as a store's query does), so that a test can act while
// the gate is inside a read.
type gatedCatalog struct {
	svc     *smarthome.Service
	mode    atomic.Int32 // catalogUp, catalogDown or catalogGated
	err     error
	entered chan struct{}
	release chan struct{}
}

const (
	catalogUp int32 = iota
	catalogDown
	catalogGated
)

func (c *gatedCatalog) Catalog(ctx context.Context) (*smarthome.Catalog, error) {
	switch c.mode.Load() {
	case catalogDown:
		return nil, c.err
	case catalogGated:
		c.entered <- struct{}{}
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.svc.Catalog(ctx)
}

// drainingHeld reports whether a goroutine is inside the gate's check of
// its held messages.
func drainingHeld() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "homemqtt.(*Gate).drainHeld")
}

// A gate closed while it checks a held message drops the messages held
// (counting them) and the check, which Close ends by cancelling its read
// of the catalog, finds the queue empty and stops: it used to take the
// checked message off a queue Close had already emptied and panic, which
// a shutdown during a catalog outage's end could bring about. The catalog
// holds the check inside drainHeld while the test closes the gate, so the
// interleaving is the failing one every run; Close returns once the check
// has ended.
func TestGateClosedWhileCheckingHeldMessage(t *testing.T) {
	url := testenv.MQTTBroker(t)
	cat := &gatedCatalog{svc: readingService(t, homesql.New(homeDB(t))), err: storetest.UnavailableError(t),
		entered: make(chan struct{}), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	var logs testenv.LogBuffer
	root := testRoot(t, url)
	g := startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: homemqtt.NewMetrics(reg)},
		cat)

	dev := newAgent(t, url, root+"/dev/down/errors", root+"/dev/down/status_request")
	cat.mode.Store(catalogDown)
	dev.publish(root+"/dev/up/config", `{"devices":[]}`, false)
	waitFor(t, "one message held", func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 1 })

	// The retry's own probe of the catalog goes through; the check of
	// the held message inside drainHeld is held up while the gate closes.
	cat.mode.Store(catalogGated)
	for range cat.entered {
		if !drainingHeld() {
			cat.release <- struct{}{}
			continue
		}
		g.Close()
		cat.mode.Store(catalogUp)
		break
	}
	waitFor(t, "the held check to end", func() bool { return !drainingHeld() })
	if v := metric(t, reg, "partnerapi_smarthome_mqtt_held_dropped_total", ""); v != 1 {
		t.Errorf("held_dropped_total %v, want 1 (the message Close dropped)", v)
	}
	if v := metric(t, reg, "partnerapi_smarthome_mqtt_held", ""); v != 0 {
		t.Errorf("held %v after Close, want 0", v)
	}
	if !strings.Contains(logs.String(), "gate closed with agent messages held for the catalog; they are dropped\" held=1") {
		t.Errorf("no drop warning in the log:\n%s", logs.String())
	}
}

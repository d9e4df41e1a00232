package homemqtt_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// gateGoroutines is the stacks of the goroutines running one of the
// gate's methods (or a function of one), empty when there is none.
func gateGoroutines() string {
	buf := make([]byte, 8<<20)
	var found []string
	for _, s := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(s, "homemqtt.(*Gate)") {
			found = append(found, s)
		}
	}
	return strings.Join(found, "\n\n")
}

// gateGoroutinesAfterClose is gateGoroutines once Close has returned.
// The last piece of work wakes Close from inside leave, so its goroutine
// can still be seen unwinding leave (unlocking, returning) for a moment
// after Close returned; it does nothing more, and it is waited for, up to
// 5 s (one still there then is stuck: a bug, reported). Any other
// goroutine of the gate is reported at once. CI caught the unwinding one
// on a loaded machine (2026-12-01) when the check took a single look.
func gateGoroutinesAfterClose() string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := gateGoroutines()
		if s == "" {
			return ""
		}
		for _, g := range strings.Split(s, "\n\n") {
			if !strings.Contains(g, "homemqtt.(*Gate).leave(") {
				return s
			}
		}
		if time.Now().After(deadline) {
			return s
		}
		time.Sleep(time.Millisecond)
	}
}

// closeReleasing closes g with held work under way: it begins Close,
// waits until Close has disconnected the client (so the held work meets a
// closing gate), lets the work go on with release, and waits up to 30 s
// for Close to return.
func closeReleasing(t *testing.T, g *homemqtt.Gate, release func()) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		g.Close()
		close(closed)
	}()
	waitFor(t, "Close to disconnect", func() bool { return !g.Connected() })
	release()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return within 30 s")
	}
}

// What an administrator sends while the gate closes, and after, never
// panics nor hangs: each call is either sent or refused with ErrClosed,
// every call once Close has returned is refused so, and Close returns
// only when none of the gate's goroutines is left. A call after Close used
// to be refused as if the broker were away (ErrBrokerDown), and one under
// way could publish on the client being disconnected. Several callers
// race Close in each round, for every kind of call.
func TestGateSendAndCommandDuringClose(t *testing.T) {
	url := testenv.MQTTBroker(t)
	calls := []struct {
		name string
		call func(g *homemqtt.Gate) (string, error)
	}{
		{"command", func(g *homemqtt.Gate) (string, error) {
			return g.Command(context.Background(), "dev", []byte(lampOn))
		}},
		{"config request", func(g *homemqtt.Gate) (string, error) {
			return g.Send(context.Background(), "dev", smarthome.ConfigRequestKind, []byte(`{}`))
		}},
		{"rename", func(g *homemqtt.Gate) (string, error) {
			return g.Send(context.Background(), "dev", smarthome.RenameKind, []byte(`{"device_id":"lamp","new_name":"Desk lamp"}`))
		}},
	}
	const (
		rounds  = 5
		callers = 4
	)
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			for range rounds {
				root := testRoot(t, url)
				g := startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.DiscardHandler)}, seeded(t))
				dev := newAgent(t, url)
				dev.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
				// The config is checked on the client's goroutine: the
				// call goes through once the gate has the lamp.
				waitFor(t, "a first call to go through", func() bool { _, err := tc.call(g); return err == nil })

				var closed atomic.Bool
				var wg sync.WaitGroup
				errs := make(chan error, callers)
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							after := closed.Load()
							_, err := tc.call(g)
							switch {
							case after && !errors.Is(err, homemqtt.ErrClosed):
								errs <- errors.New("a call after Close returned: " + errText(err) + ", want ErrClosed")
								return
							case after:
								return
							case err != nil && !errors.Is(err, homemqtt.ErrClosed):
								errs <- errors.New("a call during Close: " + err.Error() + ", want success or ErrClosed")
								return
							}
						}
					}()
				}
				g.Close()
				closed.Store(true)
				// The callers' last calls, made after Close, are refused
				// at once; what runs then is the gate's own.
				wg.Wait()
				if s := gateGoroutinesAfterClose(); s != "" {
					t.Fatalf("the gate's goroutines left once Close returned:\n%s", s)
				}
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

// A re-ask that is about to go out as the gate closes ends with Close:
// Close waits for it, it publishes nothing, logs nothing and counts no
// drop, and no goroutine of the gate is left once Close returns. It used
// to go on after Close had returned, on a client already disconnected,
// and be counted as a config request dropped for a broker out of reach.
// The test holds the re-ask as it falls due (WithBeforeReask) while Close
// begins, so the interleaving is the failing one every run.
func TestGateCloseEndsAReaskUnderWay(t *testing.T) {
	url := testenv.MQTTBroker(t)
	const wait = 200 * time.Millisecond
	hook, due, release := holdFirstReask(t)
	reg := prometheus.NewRegistry()
	var recs records
	root := testRoot(t, url)
	g := startGate(t, homemqtt.WithBeforeReask(homemqtt.WithReaskAfter(
		homemqtt.Config{Broker: url, Root: root, Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg)}, wait), hook), seeded(t))
	_, got := listen(t, url, root+"/+/down/config_request")
	newAgent(t, url).publish(root+"/dev/up/status", lampStatus, false)
	nextArrival(t, got)
	awaitDue(t, due)

	closeReleasing(t, g, release)
	// Either the re-ask is still under way, or it has done what it did.
	if s := gateGoroutinesAfterClose(); s != "" {
		t.Errorf("the gate's goroutines left once Close returned:\n%s", s)
	}
	if n, _ := recs.count("asking once more"); n != 0 {
		t.Errorf("%d re-ask lines after Close, want 0", n)
	}
	for _, reason := range []string{"unreachable", "unacknowledged"} {
		if v := metric(t, reg, "partnerapi_smarthome_mqtt_dropped_total", "topic=config_request,reason="+reason); v != 0 {
			t.Errorf("dropped config requests (%s): %v, want 0", reason, v)
		}
	}
	quiet(t, got, 2*wait, "a config request after Close")
}

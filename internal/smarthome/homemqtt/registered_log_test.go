package homemqtt_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/testenv"
)

// Through a real broker: the once-a-minute line about an unregistered
// agent carries the sender-chosen name bounded and escaped, whatever the
// handler: a name that turns a terminal's text around (U+202E), one of
// 4 000 bytes and one with quotes come out as at most 64 bytes of the
// name, escaped, with its length when cut. (Mosquitto refuses control
// characters in topics; TestLoggedName covers them for brokers that do
// not.)
func TestGateLogsUnknownAgentNamesSafely(t *testing.T) {
	for _, tc := range []struct {
		test, agent, want string
	}{
		{"bidi override", "evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"long", strings.Repeat("a", 4000), strings.Repeat("a", 64) + "...(4000 bytes)"},
		{"quote and backslash", `a"b\c`, `a\"b\\c`},
	} {
		t.Run(tc.test, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			svc := readingService(t, homesql.New(homeDB(t)))
			if _, err := svc.CreateCredential(context.Background(), smarthome.KindAgent, "dev"); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			var recs records
			root := testRoot(t, url)
			startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(&recs), Metrics: homemqtt.NewMetrics(reg), Agents: svc}, svc)
			newAgent(t, url).publish(root+"/"+tc.agent+"/up/config", `{"devices":[]}`, false)
			// The gate counts the message before it logs it, so the test
			// waits for the line as well as for the count.
			var got []string
			waitFor(t, "the message ignored and logged", func() bool {
				got = nil
				recs.mu.Lock()
				for _, rec := range recs.recs {
					rec.Attrs(func(a slog.Attr) bool {
						if a.Key == "agent" {
							got = append(got, a.Value.String())
						}
						return true
					})
				}
				recs.mu.Unlock()
				return metric(t, reg, "partnerapi_smarthome_mqtt_unknown_agent_total", "") == 1 && len(got) > 0
			})
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("agent logged as %q, want %q", got, tc.want)
			}
			if strings.IndexFunc(got[0], func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				t.Errorf("agent logged with a character that is not printable: %q", got[0])
			}
		})
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// Through serve, its SQLite store and a real broker: by default the gate
// serves only agents with a credential made by the CLI (another Service on
// the same database, as a second process), so a config under a name
// without one gets no answer and is counted on /metrics, an agent created
// while serve runs is answered, and one deleted is not any more; with
// --smarthome-mqtt-registered-agents=false every name is served.
func TestSmarthomeMQTTGateServesRegisteredAgents(t *testing.T) {
	broker := testenv.MQTTBroker(t)
	for _, tc := range []struct {
		name  string
		flags []string
		// registered: only registered agents are answered.
		registered bool
	}{
		{"default", nil, true},
		{"opted out", []string{"--smarthome-mqtt-registered-agents=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fmt.Sprintf("partnerapi-serve-test-%d", time.Now().UnixNano())
			c, got := subscribedAgent(t, broker, root, root+"/__config", root+"/ctl-u/down/errors")
			clearRetainedAfter(t, broker, root)
			ts := startServer(t, append([]string{"--only", "smarthome", "--smarthome-mqtt", broker, "--smarthome-mqtt-root", root}, tc.flags...)...)
			// The announcement comes once the gate has subscribed.
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("no global configuration in 10 s")
			}
			// answered publishes a config and reports whether it was
			// answered: within 10 s when an answer is due (want), which a
			// loaded machine may take longer than a second to deliver,
			// and within a second when none is.
			answered := func(want bool) bool {
				t.Helper()
				if tok := c.Publish(root+"/ctl-u/up/config", 1, false, `{"devices": nope}`); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
					t.Fatal(tok.Error())
				}
				wait := time.Second
				if want {
					wait = 10 * time.Second
				}
				select {
				case m := <-got:
					if m.Topic() != root+"/ctl-u/down/errors" {
						t.Fatalf("answer on %s %s", m.Topic(), m.Payload())
					}
					return true
				case <-time.After(wait):
					return false
				}
			}
			cli := func(verb string) {
				t.Helper()
				if err := runSmarthome(context.Background(), []string{"agent", verb, "--login", "ctl-u", "--data-dir", ts.dataDir},
					func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}); err != nil {
					t.Fatal(err)
				}
				// Another process's change is seen within 100 ms.
				time.Sleep(200 * time.Millisecond)
			}
			unknown := func() string {
				_, body := get(t, ts.urls["smarthome"]+"/metrics")
				return regexp.MustCompile(`(?m)^partnerapi_smarthome_mqtt_unknown_agent_total (\d+)$`).FindString(string(body))
			}

			if got := answered(!tc.registered); got == tc.registered {
				t.Fatalf("a config of an agent without a credential answered: %v", got)
			}
			want := "partnerapi_smarthome_mqtt_unknown_agent_total 0"
			if tc.registered {
				want = "partnerapi_smarthome_mqtt_unknown_agent_total 1"
				// An ignored config leaves no answer to wait for: it is
				// counted when the gate gets to it, which a loaded machine
				// may put off past the second spent looking for an answer.
				pollFor(t, "the ignored config counted", func() bool { return unknown() == want })
			}
			if u := unknown(); u != want {
				t.Fatalf("/metrics has %q, want %q", u, want)
			}
			cli("create")
			if !answered(true) {
				t.Fatal("an agent created while serve runs was not served")
			}
			cli("delete")
			if got := answered(!tc.registered); got == tc.registered {
				t.Fatalf("a deleted agent's config answered: %v", got)
			}
		})
	}
}

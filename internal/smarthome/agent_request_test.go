package smarthome

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The answer to the gate's down/config_request is the agent's whole list
// and replaces its devices, while any other config merges: the first
// config after a request (within FullConfigWait) is the answer, a request
// that was withdrawn or expired expects none, and requests outstanding
// together make one window, FullConfigWait from the first of them: the
// gate's re-ask or an administrator's request does not push it out.
func TestAgentConfigRequestAnswerReplaces(t *testing.T) {
	c := seed(t)
	const (
		hub  = `{"id":"hub","name":"Hub","default_name":"Hub","model":{"id":"h1","manufacturer":"M","model":"H","category":"hub","features":["online"]}}`
		lamp = `{"id":"lamp","parent_id":"hub","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
		plug = `{"id":"plug","parent_id":"hub","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
	)
	all := `{"devices":[` + hub + `,` + lamp + `,` + plug + `]}`
	withoutPlug := `{"devices":[` + hub + `,` + lamp + `]}`
	plugAlone := `{"devices":[` + plug + `]}`
	for _, tc := range []struct {
		name string
		// request runs before the second config, with the clock's
		// advance function.
		request func(a *Agent, advance func(time.Duration))
		second  string
		want    []string
	}{
		{"no request: a config of two devices merges", func(*Agent, func(time.Duration)) {}, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"the answer to a request replaces", func(a *Agent, _ func(time.Duration)) { a.ConfigRequested() }, withoutPlug, []string{"hub", "lamp"}},
		{"an answer just before FullConfigWait replaces", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(FullConfigWait - time.Millisecond)
		}, withoutPlug, []string{"hub", "lamp"}},
		{"a config after FullConfigWait merges", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(FullConfigWait)
		}, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"a withdrawn request expects no answer", func(a *Agent, _ func(time.Duration)) { a.ConfigRequested()() }, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"withdrawing an earlier request keeps a later one", func(a *Agent, advance func(time.Duration)) {
			first := a.ConfigRequested()
			advance(time.Second)
			a.ConfigRequested()
			first()
		}, withoutPlug, []string{"hub", "lamp"}},
		{"a request while one is outstanding (the re-ask) does not push the window out", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(FullConfigWait / 2)
			a.ConfigRequested()
			advance(FullConfigWait / 2)
		}, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"the re-ask's answer within the first request's window replaces", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(FullConfigWait / 2)
			a.ConfigRequested()
			advance(FullConfigWait/2 - time.Millisecond)
		}, withoutPlug, []string{"hub", "lamp"}},
		{"requests every few seconds do not keep the window open", func(a *Agent, advance func(time.Duration)) {
			for range 4 {
				a.ConfigRequested()
				advance(FullConfigWait / 4)
			}
		}, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"a request after the window ended opens a new one", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(FullConfigWait)
			a.ConfigRequested()
			advance(FullConfigWait - time.Millisecond)
		}, withoutPlug, []string{"hub", "lamp"}},
		{"withdrawing a request that joined keeps the window", func(a *Agent, advance func(time.Duration)) {
			a.ConfigRequested()
			advance(time.Second)
			a.ConfigRequested()()
		}, withoutPlug, []string{"hub", "lamp"}},
		{"withdrawing every request ends the window", func(a *Agent, advance func(time.Duration)) {
			first := a.ConfigRequested()
			advance(time.Second)
			a.ConfigRequested()()
			first()
		}, withoutPlug, []string{"hub", "lamp", "plug"}},
		{"the answer's child needs its parent in the answer", func(a *Agent, _ func(time.Duration)) { a.ConfigRequested() }, plugAlone, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
			var a Agent
			a.SetClock(func() time.Time { return now })
			if rep, err := a.Config(c, []byte(all)); err != nil || !rep.Valid {
				t.Fatalf("whole config: %+v, %v", rep, err)
			}
			tc.request(&a, func(d time.Duration) { now = now.Add(d) })
			rep, err := a.Config(c, []byte(tc.second))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if rep.Valid || !reflect.DeepEqual(rep.Devices[0].Errors, []string{"parent_id 'hub' is not another device of the agent's config"}) {
					t.Errorf("a child without its hub in the whole list: %+v", rep)
				}
				return
			}
			if !rep.Valid {
				t.Fatalf("second config: %+v", rep)
			}
			if got := a.Devices(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("devices %v, want %v", got, tc.want)
			}
		})
	}
}

// A device the answer to a config request leaves out is forgotten: its
// status is judged as a device's never announced (no category), a command,
// a rename or a move for it is refused; the next unsolicited config of one
// device merges again.
func TestAgentForgetsDeviceLeftOutOfAnswer(t *testing.T) {
	c := seed(t)
	var a Agent
	const (
		lamp = `{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
		plug = `{"id":"plug","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
		tv   = `{"id":"tv","name":"TV","default_name":"TV","model":{"id":"m3","manufacturer":"M","model":"T","category":"socket","features":["online","on_off"]}}`
	)
	if _, err := a.Config(c, []byte(`{"devices":[`+lamp+`,`+plug+`]}`)); err != nil {
		t.Fatal(err)
	}
	a.ConfigRequested()
	if _, err := a.Config(c, []byte(`{"devices":[`+lamp+`]}`)); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Status(c, []byte(`{"devices":{"plug":{"states":[{"key":"on_off","value":{"type":"INTEGER","integer_value":"1"}}]}}}`))
	if err != nil || rep.Devices[0].Category != "" {
		t.Errorf("status of the forgotten plug judged with a category: %+v, %v", rep, err)
	}
	_, err = a.Command(c, []byte(`{"devices":{"plug":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`))
	var inv *InvalidError
	if !errors.As(err, &inv) || !reflect.DeepEqual(inv.Details, []string{"device 'plug' is not a device of the agent's config"}) {
		t.Errorf("command to the forgotten plug: %v", err)
	}
	if _, err := a.Rename([]byte(`{"device_id":"plug","new_name":"P"}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename of the forgotten plug: %v", err)
	}
	if _, err := a.ChangeGroup([]byte(`{"device_id":"plug","home":"H","room":"R"}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("move of the forgotten plug: %v", err)
	}
	if _, err := a.Config(c, []byte(`{"devices":[`+tv+`]}`)); err != nil {
		t.Fatal(err)
	}
	if got := a.Devices(); !reflect.DeepEqual(got, []string{"lamp", "tv"}) {
		t.Errorf("devices after an unsolicited config of one device: %v, want lamp and tv", got)
	}
}

// A config request is the empty object the reference gives, nothing else.
func TestParseConfigRequest(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{}`, true},
		{` { } `, true},
		{`{"devices":[]}`, false},
		{`[]`, false},
		{`{}{}`, false},
		{``, false},
	} {
		out, err := ParseConfigRequest([]byte(tc.body))
		var inv *InvalidError
		switch {
		case tc.ok && (err != nil || string(out) != "{}"):
			t.Errorf("%q: %q, %v", tc.body, out, err)
		case !tc.ok && !errors.As(err, &inv):
			t.Errorf("%q: %v, want InvalidError", tc.body, err)
		}
	}
}

// The agent's config of a device the gate asked it to rename or move,
// showing the change applied, is not the answer to a config request
// outstanding beside it, whichever of the two comes first: it merges, and
// the whole list replaces. Any other config is the answer, a whole list of
// the renamed device under its old name and the hub included (an agent
// that does not answer renames). The agent (hub, lamp, plug, tv) had the
// tv taken off; the rename's answer is the lamp alone, or with the hub as
// MQTT-SberGate sends it.
func TestAgentRenameAnswerIsNotTheConfigAnswer(t *testing.T) {
	c := seed(t)
	const (
		hub  = `{"id":"hub","name":"Hub","default_name":"Hub","model":{"id":"h1","manufacturer":"M","model":"H","category":"hub","features":["online"]}}`
		plug = `{"id":"plug","parent_id":"hub","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
		tv   = `{"id":"tv","parent_id":"hub","name":"TV","default_name":"TV","model":{"id":"m3","manufacturer":"M","model":"T","category":"socket","features":["online","on_off"]}}`
	)
	// lampAs is the lamp's config under a name, in a home and room.
	lampAs := func(name, home, room string) string {
		return `{"id":"lamp","parent_id":"hub","name":"` + name + `","default_name":"Lamp","home":"` + home + `","room":"` + room +
			`","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
	}
	lamp, renamed := lampAs("Lamp", "Home", "Hall"), lampAs("Desk lamp", "Home", "Hall")
	moved, both := lampAs("Lamp", "Home", "Study"), lampAs("Desk lamp", "Home", "Study")
	list := func(devs ...string) string { return `{"devices":[` + strings.Join(devs, ",") + `]}` }
	everything, whole := []string{"hub", "lamp", "plug", "tv"}, []string{"hub", "lamp", "plug"}
	rename := func(a *Agent) { a.RenameRequested(RenameRequest{DeviceID: "lamp", NewName: "Desk lamp"}) }
	move := func(a *Agent) { a.MoveRequested(GroupRequest{DeviceID: "lamp", Home: "Home", Room: "Study"}) }
	type step struct {
		config string
		want   []string // the agent's devices after it
	}
	for _, tc := range []struct {
		name    string
		request func(a *Agent) // before the config request
		steps   []step
	}{
		{"the rename's answer first, the lamp alone", rename, []step{{list(renamed), everything}, {list(hub, renamed, plug), whole}}},
		{"the rename's answer first, with the hub", rename, []step{{list(hub, renamed), everything}, {list(hub, renamed, plug), whole}}},
		{"the whole list first", rename, []step{{list(hub, renamed, plug), whole}, {list(hub, renamed), whole}}},
		{"renames of two devices answered in one config", func(a *Agent) {
			rename(a)
			a.RenameRequested(RenameRequest{DeviceID: "plug", NewName: "Plug"})
		}, []step{{list(plug, renamed), everything}, {list(hub, renamed, plug), whole}}},
		{"a config of the lamp and another device is the answer", rename, []step{{list(hub, renamed, plug), whole}}},
		{"a withdrawn rename expects no answer", func(a *Agent) { a.RenameRequested(RenameRequest{DeviceID: "lamp", NewName: "Desk lamp"})() },
			[]step{{list(hub, renamed), []string{"hub", "lamp"}}}},
		{"the rename's answer only once", rename, []step{{list(hub, renamed), everything}, {list(hub, renamed), []string{"hub", "lamp"}}}},
		{"an agent that does not answer renames: the lamp under its old name and the hub are the whole list", rename,
			[]step{{list(hub, lamp), []string{"hub", "lamp"}}}},
		{"the move's answer first", move, []step{{list(hub, moved), everything}, {list(hub, moved, plug), whole}}},
		{"an agent that does not answer moves: the lamp in its old room and the hub are the whole list", move,
			[]step{{list(hub, lamp), []string{"hub", "lamp"}}}},
		{"a move's answer needs the new home too", move, []step{{list(hub, lampAs("Lamp", "Cottage", "Study")), []string{"hub", "lamp"}}}},
		{"a rename and a move answered one after the other", func(a *Agent) {
			rename(a)
			move(a)
		}, []step{{list(hub, renamed), everything}, {list(hub, both), everything}, {list(hub, both, plug), whole}}},
		{"two renames answered in turn", func(a *Agent) {
			a.RenameRequested(RenameRequest{DeviceID: "lamp", NewName: "Lamp 2"})
			rename(a)
		}, []step{{list(hub, lampAs("Lamp 2", "Home", "Hall")), everything}, {list(hub, renamed), everything}, {list(hub, renamed, plug), whole}}},
		{"a renamed hub's answer alone", func(a *Agent) { a.RenameRequested(RenameRequest{DeviceID: "hub", NewName: "Hub"}) },
			[]step{{list(hub), everything}, {list(hub, lamp, plug), whole}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
			var a Agent
			a.SetClock(func() time.Time { return now })
			if rep, err := a.Config(c, []byte(list(hub, lamp, plug, tv))); err != nil || !rep.Valid {
				t.Fatalf("whole config: %+v, %v", rep, err)
			}
			tc.request(&a)
			a.ConfigRequested()
			for i, s := range tc.steps {
				rep, err := a.Config(c, []byte(s.config))
				if err != nil || !rep.Valid {
					t.Fatalf("config %d: %+v, %v", i+1, rep, err)
				}
				if got := a.Devices(); !reflect.DeepEqual(got, s.want) {
					t.Fatalf("devices after config %d: %v, want %v", i+1, got, s.want)
				}
			}
		})
	}

	// A rename's expectation ends with FullConfigWait as a request's does:
	// then the renamed lamp alone is the answer to a newer request.
	now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	var a Agent
	a.SetClock(func() time.Time { return now })
	if _, err := a.Config(c, []byte(list(hub, lamp, plug, tv))); err != nil {
		t.Fatal(err)
	}
	rename(&a)
	now = now.Add(FullConfigWait)
	a.ConfigRequested()
	if _, err := a.Config(c, []byte(list(hub, renamed))); err != nil {
		t.Fatal(err)
	}
	if got := a.Devices(); !reflect.DeepEqual(got, []string{"hub", "lamp"}) {
		t.Errorf("devices after an expired rename and a request: %v, want hub and lamp", got)
	}
}

// A config request is unanswered until a config comes that is not a
// rename's answer, and no longer the one to re-ask once a later request
// joined its window or opened another, or it was withdrawn; it stays
// unanswered past FullConfigWait, which ends only its reading of the next
// config.
func TestAgentConfigRequestUnanswered(t *testing.T) {
	c := seed(t)
	const (
		hub  = `{"id":"hub","name":"Hub","default_name":"Hub","model":{"id":"h1","manufacturer":"M","model":"H","category":"hub","features":["online"]}}`
		lamp = `{"id":"lamp","parent_id":"hub","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
	)
	for _, tc := range []struct {
		name  string
		after func(a *Agent, r *ConfigRequest, advance func(time.Duration))
		want  bool
	}{
		{"nothing came", func(*Agent, *ConfigRequest, func(time.Duration)) {}, true},
		{"nothing came in FullConfigWait", func(_ *Agent, _ *ConfigRequest, advance func(time.Duration)) { advance(FullConfigWait) }, true},
		{"the answer came", func(a *Agent, _ *ConfigRequest, _ func(time.Duration)) {
			if _, err := a.Config(c, []byte(`{"devices":[`+hub+`,`+lamp+`]}`)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a rename's answer came", func(a *Agent, _ *ConfigRequest, _ func(time.Duration)) {
			a.RenameRequested(RenameRequest{DeviceID: "lamp", NewName: "Lamp"})
			if _, err := a.Config(c, []byte(`{"devices":[`+lamp+`]}`)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a later request joined its window (the later one re-asks)", func(a *Agent, _ *ConfigRequest, advance func(time.Duration)) {
			advance(time.Second)
			a.RequestConfig()
		}, false},
		{"a later request joined and was withdrawn", func(a *Agent, _ *ConfigRequest, advance func(time.Duration)) {
			advance(time.Second)
			a.RequestConfig().Withdraw()
		}, true},
		{"a later request opened a new window", func(a *Agent, _ *ConfigRequest, advance func(time.Duration)) {
			advance(FullConfigWait)
			a.RequestConfig()
		}, false},
		{"withdrawn", func(_ *Agent, r *ConfigRequest, _ func(time.Duration)) { r.Withdraw() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
			var a Agent
			a.SetClock(func() time.Time { return now })
			if _, err := a.Config(c, []byte(`{"devices":[`+hub+`,`+lamp+`]}`)); err != nil {
				t.Fatal(err)
			}
			r := a.RequestConfig()
			tc.after(&a, r, func(d time.Duration) { now = now.Add(d) })
			if got := r.Unanswered(); got != tc.want {
				t.Errorf("Unanswered() = %v, want %v", got, tc.want)
			}
		})
	}
}

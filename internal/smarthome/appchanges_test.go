package smarthome

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The app's changes go only to devices the agent's configs announced, any
// of them whatever its model (a device of a category the catalog lacks is
// still listed and named in the app), including one a later config of
// other devices left out: configs are merged.
func TestAgentRenameAndChangeGroup(t *testing.T) {
	c := seed(t)
	var a Agent
	if _, err := a.Rename([]byte(`{"device_id":"lamp","new_name":"L"}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rename before any config: %v, want ErrNotFound", err)
	}
	config := `{"devices":[
		{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}},
		{"id":"odd","name":"Odd","default_name":"Odd","model":{"id":"m9","manufacturer":"M","model":"O","category":"toaster","features":["online"]}}]}`
	if _, err := a.Config(c, []byte(config)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"lamp", "odd"} {
		out, err := a.Rename([]byte(`{"new_name":"N","device_id":"` + id + `"}`))
		if err != nil || string(out) != `{"device_id":"`+id+`","new_name":"N"}` {
			t.Errorf("rename %s: %s, %v", id, out, err)
		}
		out, err = a.ChangeGroup([]byte(`{"room":"R","home":"H","device_id":"` + id + `"}`))
		if err != nil || string(out) != `{"device_id":"`+id+`","home":"H","room":"R"}` {
			t.Errorf("move %s: %s, %v", id, out, err)
		}
	}
	if _, err := a.Config(c, []byte(`{"devices":[{"id":"lamp","name":"Lamp","default_name":"Lamp","model_id":"nope"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ChangeGroup([]byte(`{"device_id":"odd","home":"H","room":"R"}`)); err != nil {
		t.Errorf("move of a device the last config left out: %v", err)
	}
	var unknown *UnknownDeviceError
	if _, err := a.ChangeGroup([]byte(`{"device_id":"ghost","home":"H","room":"R"}`)); !errors.As(err, &unknown) || unknown.Device != "ghost" {
		t.Errorf("move of a device never announced: %v, want UnknownDeviceError naming it", err)
	}
	if _, err := a.Rename([]byte(`{"device_id":"lamp","new_name":"L"}`)); err != nil {
		t.Errorf("rename of a device whose model is unknown: %v", err)
	}
}

// Every problem of a request is one detail; the message sent keeps names
// as typed (no HTML escaping) in the reference's field order.
func TestParseAppChanges(t *testing.T) {
	for _, c := range []struct {
		parse func([]byte) error
		body  string
		want  []string
	}{
		{renameErr, `{"device_id":"","new_name":""}`, []string{"device_id is required", "new_name is required and cannot be blank"}},
		{renameErr, `{"device_id":"d","new_name":"` + strings.Repeat("a", 129) + `"}`, []string{"new_name is 129 characters, more than 128"}},
		{renameErr, `{"device_id":"d","new_name":"a\tb"}`, []string{"new_name cannot hold control characters (line breaks, tabs)"}},
		{renameErr, `{"device_id":"d","new_name":"a"} {}`, []string{`body must be {"device_id": "...", "new_name": "..."}: data after the object`}},
		{renameErr, "{\"device_id\":\"d\",\"new_name\":\"\xff\"}", []string{"body is not valid UTF-8"}},
		{renameErr, `{"device_id":"d","new_name":7}`, nil},
		{groupErr, `{"device_id":"d","home":"","room":"` + strings.Repeat("ж", 129) + `"}`, []string{"home is required and cannot be blank", "room is 129 characters, more than 128"}},
		{groupErr, `{"device_id":"d","home":"H","room":"R","groups":["x"]}`, nil},
		{reportErr, `{"topic":"up/status","errors":["a"," "]}`, []string{"errors[1] is blank"}},
		{reportErr, `{"topic":"","errors":null}`, []string{"topic must be the agent's up/config or up/status, the messages the cloud reads", "errors must list at least one error"}},
		{reportErr, `{"topic":"up/config","errors":["a"],"devices":[]}`, nil},
	} {
		err := c.parse([]byte(c.body))
		var inv *InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("%.60s: %v, want InvalidError", c.body, err)
			continue
		}
		if c.want != nil && strings.Join(inv.Details, "|") != strings.Join(c.want, "|") {
			t.Errorf("%.60s: %q, want %q", c.body, inv.Details, c.want)
		}
	}
	if _, err := ParseRename([]byte(`{"device_id":"d","new_name":"` + strings.Repeat("я", 128) + `"}`)); err != nil {
		t.Errorf("a name of 128 characters: %v", err)
	}
	out, err := ParseErrorReport([]byte(`{"errors":["a <b> & c"],"topic":"up/status"}`))
	if err != nil || string(out) != `{"topic":"up/status","errors":["a <b> & c"]}` {
		t.Errorf("report: %s, %v", out, err)
	}
}

func renameErr(b []byte) error { _, err := ParseRename(b); return err }
func groupErr(b []byte) error  { _, err := ParseGroup(b); return err }
func reportErr(b []byte) error { _, err := ParseErrorReport(b); return err }

// checkLabel fails when a forwarded name, home or room could not be one the
// parser takes.
func checkLabel(t *testing.T, v string) {
	t.Helper()
	if strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > MaxPlacementName || strings.IndexFunc(v, unicode.IsControl) >= 0 || !utf8.ValidString(v) {
		t.Fatalf("label %q was accepted", v)
	}
}

// What the parsers accept is sent on as is: the rebuilt message decodes to
// the same fields, and every label is one the app could show.
func FuzzParseAppChanges(f *testing.F) {
	f.Add([]byte(`{"device_id":"lamp","new_name":"Лампа"}`))
	f.Add([]byte(`{"device_id":"lamp","home":"Дом","room":"Кухня"}`))
	f.Add([]byte(`{"topic":"up/config","errors":["x"]}`))
	f.Add([]byte(`{"device_id":"d","new_name":"a\u0000"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := ParseRename(b); err == nil {
			checkLabel(t, r.NewName)
			out, _ := marshalMessage(r)
			var back RenameRequest
			if json.Unmarshal(out, &back) != nil || back != r || r.DeviceID == "" {
				t.Fatalf("rename %q sent as %q", b, out)
			}
		}
		if g, err := ParseGroup(b); err == nil {
			checkLabel(t, g.Home)
			checkLabel(t, g.Room)
			out, _ := marshalMessage(g)
			var back GroupRequest
			if json.Unmarshal(out, &back) != nil || back != g || g.DeviceID == "" {
				t.Fatalf("move %q sent as %q", b, out)
			}
		}
		if out, err := ParseErrorReport(b); err == nil {
			var back ErrorReport
			if json.Unmarshal(out, &back) != nil || len(back.Errors) == 0 || (back.Topic != "up/config" && back.Topic != "up/status") {
				t.Fatalf("report %q sent as %q", b, out)
			}
		}
	})
}

// A member named as one of a message's only in another case is refused by
// its name, as an unknown member is, not read as that member.
func TestParseAppChangesNameCase(t *testing.T) {
	if _, err := ParseRename([]byte(`{"device_id":"lamp","New_Name":"Hall"}`)); err == nil || !strings.Contains(err.Error(), `"New_Name"`) {
		t.Errorf("rename with New_Name: %v, want it refused by name", err)
	}
	if _, err := ParseGroup([]byte(`{"device_id":"lamp","home":"H","ROOM":"R"}`)); err == nil || !strings.Contains(err.Error(), `"ROOM"`) {
		t.Errorf("change group with ROOM: %v, want it refused by name", err)
	}
}

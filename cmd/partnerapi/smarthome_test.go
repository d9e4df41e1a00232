package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
)

// smarthomeRequired is every category's unconditionally required features as
// reference §6.1 lists them (bold), typed in independently of the catalog.
var smarthomeRequired = map[string][]string{
	"curtain": {"online", "open_state"}, "gate": {"online", "open_state"}, "hub": {"online"},
	"hvac_ac": {"hvac_temp_set", "on_off", "online"}, "hvac_air_purifier": {"on_off", "online"},
	"hvac_boiler": {"on_off", "online"}, "hvac_fan": {"on_off", "online"}, "hvac_heater": {"on_off", "online"},
	"hvac_humidifier": {"on_off", "online"}, "hvac_radiator": {"on_off", "online"},
	"hvac_underfloor_heating": {"on_off", "online"}, "intercom": {"online"}, "kettle": {"on_off", "online"},
	"led_strip": {"on_off", "online"}, "light": {"on_off", "online"}, "relay": {"on_off", "online"},
	"scenario_button": {"online"}, "sensor_air": {"online"}, "sensor_door": {"doorcontact_state", "online"},
	"sensor_gas": {"gas_leak_state", "online"}, "sensor_pir": {"online", "pir"}, "sensor_smoke": {"online", "smoke_state"},
	"sensor_temp": {"online"}, "sensor_water_leak": {"online", "water_leak_state"}, "socket": {"on_off", "online"},
	"tv": {"on_off", "online"}, "vacuum_cleaner": {"online"}, "valve": {"online", "open_state"},
	"window_blind": {"online", "open_state"},
}

type homeClient struct {
	t          *testing.T
	base       string
	user, pass string
}

func (c homeClient) do(method, path string, body []byte, header ...string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json") // real agents send it even on GET
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, b
}

// provision runs `partnerapi smarthome <kind> create` against the server's data dir.
func provision(t *testing.T, dataDir, kind, login string) homeClient {
	t.Helper()
	var out bytes.Buffer
	err := runSmarthome(context.Background(), []string{kind, "create", "--login", login, "--data-dir", dataDir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var cred struct{ Login, Password string }
	if err := json.Unmarshal(out.Bytes(), &cred); err != nil || cred.Login != login || len(cred.Password) < 24 {
		t.Fatalf("credential output %q: %v", out.String(), err)
	}
	return homeClient{t: t, user: cred.Login, pass: cred.Password}
}

func wantCommonError(t *testing.T, resp *http.Response, body []byte, status int) map[string]any {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	if e["code"] != float64(status) || e["message"] == "" || e["details"] == nil {
		t.Fatalf("not a Common error: %s", body)
	}
	// Reference §2: every answer is JSON in UTF-8, errors too.
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("error %d with Content-Type %q", status, ct)
	}
	return e
}

func TestSmarthomeCatalogOverHTTP(t *testing.T) {
	ts := startServer(t, "--only", "smarthome")
	c := provision(t, ts.dataDir, "agent", "agent-1")
	c.base = ts.urls["smarthome"]

	resp, body := c.do("GET", "//v1/mqtt-gate/categories", nil)
	golden, _ := os.ReadFile("testdata/smarthome/categories.json")
	if resp.StatusCode != 200 || !bytes.Equal(body, golden) {
		t.Fatalf("categories: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	var cats struct{ Categories []string }
	_ = json.Unmarshal(body, &cats)
	if len(cats.Categories) != 29 || !sort.StringsAreSorted(cats.Categories) {
		t.Fatalf("%d categories", len(cats.Categories))
	}
	for _, cat := range cats.Categories {
		resp, body := c.do("GET", "/v1/mqtt-gate/categories/"+cat+"/features", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", cat, resp.StatusCode, body)
		}
		var fs struct {
			Features []struct {
				Name     string `json:"name"`
				DataType string `json:"data_type"`
				Required *bool  `json:"required"`
			}
		}
		if err := json.Unmarshal(body, &fs); err != nil {
			t.Fatal(err)
		}
		var names, required []string
		for _, f := range fs.Features {
			names = append(names, f.Name)
			if f.DataType == "" || f.Required == nil {
				t.Errorf("%s/%s: data_type %q required %v", cat, f.Name, f.DataType, f.Required)
			} else if *f.Required {
				required = append(required, f.Name)
			}
		}
		if !sort.StringsAreSorted(names) || len(names) == 0 {
			t.Errorf("%s: features %v not in stable order", cat, names)
		}
		if !reflect.DeepEqual(required, smarthomeRequired[cat]) {
			t.Errorf("%s: required %v, reference says %v", cat, required, smarthomeRequired[cat])
		}
	}
	_, body = c.do("GET", "/v1/mqtt-gate/categories/light/features/", nil)
	golden, _ = os.ReadFile("testdata/smarthome/light_features.json")
	if !bytes.Equal(body, golden) {
		t.Errorf("light features (trailing slash):\n%s\nwant\n%s", body, golden)
	}

	resp, body = c.do("GET", "/v1/mqtt-gate/models", nil)
	var models struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal(body, &models); err != nil || resp.StatusCode != 200 || len(models.Models) < 4 {
		t.Fatalf("models: %d %s", resp.StatusCode, body)
	}
	for i, m := range models.Models {
		if i > 0 && m["id"].(string) <= models.Models[i-1]["id"].(string) {
			t.Errorf("models not ordered by id")
		}
		if dep, ok := m["dependencies"].(map[string]any); ok {
			if _, ok := dep["light_colour"].(map[string]any)["value"]; !ok {
				t.Errorf("dependency not emitted as value: %v", dep)
			}
		}
	}
	if !strings.Contains(string(body), `"integer_values":{"min":"100","max":"900","step":"1"}`) {
		t.Errorf("integer_values not strings: %s", body)
	}
	// The lamp of the provider's mqtt-gate models sample, byte for byte as
	// reference §1 prints it (its id QWERTY123, §5): members in the
	// sample's order, a dependency's values "type" first.
	golden, _ = os.ReadFile("testdata/smarthome/model_lamp.json")
	if lamp := bytes.TrimSpace(golden); len(lamp) == 0 || !bytes.Contains(body, lamp) {
		t.Errorf("models lack the reference's lamp\n%s\nin\n%.600s", lamp, body)
	}

	t.Run("unknown category", func(t *testing.T) {
		resp, body := c.do("GET", "/v1/mqtt-gate/categories/toaster/features", nil)
		e := wantCommonError(t, resp, body, 404)
		if !reflect.DeepEqual(e["details"], []any{"category 'toaster' is not supported"}) {
			t.Errorf("details %v", e["details"])
		}
		resp, body = c.do("GET", "/v1/mqtt-gate/nothing", nil)
		if e := wantCommonError(t, resp, body, 404); !reflect.DeepEqual(e["details"], []any{"path '/v1/mqtt-gate/nothing' is not supported"}) {
			t.Errorf("unknown path: details %v", e["details"])
		}
		// Reference §3: 405 with Allow: GET and details [].
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			resp, body = c.do(method, "/v1/mqtt-gate/categories", nil)
			if e := wantCommonError(t, resp, body, 405); !reflect.DeepEqual(e["details"], []any{}) || resp.Header.Get("Allow") != "GET" {
				t.Errorf("%s: details %v, Allow %q; want [] and GET", method, e["details"], resp.Header.Get("Allow"))
			}
		}
	})

	// Reference §2 and §8: X-Request-Id is echoed, or made (a UUID) when
	// the client sends none, as real agents do not; unknown query
	// parameters are ignored.
	t.Run("request id and query", func(t *testing.T) {
		resp, _ := c.do("GET", "/v1/mqtt-gate/categories", nil, "X-Request-Id", "agent-req-42")
		if got := resp.Header.Get("X-Request-Id"); got != "agent-req-42" {
			t.Errorf("X-Request-Id %q, want the client's agent-req-42", got)
		}
		resp, body := c.do("GET", "/v1/mqtt-gate/categories?page=2&category=light&sort=desc", nil)
		if got := resp.Header.Get("X-Request-Id"); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(got) {
			t.Errorf("X-Request-Id %q without one sent, want a UUID", got)
		}
		golden, _ := os.ReadFile("testdata/smarthome/categories.json")
		if resp.StatusCode != 200 || !bytes.Equal(body, golden) {
			t.Errorf("categories with unknown query parameters: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("auth", func(t *testing.T) {
		for _, tc := range []struct{ name, user, pass string }{
			{"missing", "", ""}, {"wrong password", "agent-1", "nope"}, {"unknown login", "ghost", c.pass},
		} {
			bad := c
			bad.user, bad.pass = tc.user, tc.pass
			for _, path := range []string{"/v1/mqtt-gate/categories", "/v1/mqtt-gate/categories/light/features", "/v1/mqtt-gate/models"} {
				resp, body := bad.do("GET", path, nil)
				if e := wantCommonError(t, resp, body, 401); !reflect.DeepEqual(e["details"], []any{}) {
					t.Errorf("%s %s: details %v, want []", tc.name, path, e["details"])
				}
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic realm=") {
					t.Errorf("%s %s: WWW-Authenticate %q", tc.name, path, resp.Header.Get("WWW-Authenticate"))
				}
			}
		}
		// An agent credential is not an admin credential.
		resp, body := c.do("DELETE", "/v1/admin/models/QWERTY123", nil)
		wantCommonError(t, resp, body, 401)
		if strings.Contains(ts.logs.String(), c.pass) {
			t.Error("a password reached the logs")
		}
	})

	t.Run("etag", func(t *testing.T) {
		for _, path := range []string{"/v1/mqtt-gate/categories", "/v1/mqtt-gate/categories/light/features", "/v1/mqtt-gate/models"} {
			resp, _ := c.do("GET", path, nil)
			etag := resp.Header.Get("ETag")
			if etag == "" {
				t.Fatalf("%s: no ETag", path)
			}
			// Reference §8.5: ETag and Last-Modified, the catalog's
			// time, which this server seeded moments ago.
			if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err != nil || lm.After(time.Now()) || time.Since(lm) > time.Hour {
				t.Errorf("%s: Last-Modified %q (%v), want the catalog's time", path, resp.Header.Get("Last-Modified"), err)
			}
			resp, body := c.do("GET", path, nil, "If-None-Match", etag)
			if resp.StatusCode != 304 || len(body) != 0 {
				t.Errorf("%s: If-None-Match %s → %d %q", path, etag, resp.StatusCode, body)
			}
			resp, _ = c.do("GET", path, nil, "If-None-Match", `"other", W/`+etag)
			if resp.StatusCode != 304 {
				t.Errorf("%s: weak tag in a list → %d", path, resp.StatusCode)
			}
			resp, _ = c.do("GET", path, nil, "If-None-Match", `"catalog-0"`)
			if resp.StatusCode != 200 {
				t.Errorf("%s: stale tag → %d", path, resp.StatusCode)
			}
		}
	})
}

func TestSmarthomeValidateOverHTTP(t *testing.T) {
	ts := startServer(t, "--only", "smarthome")
	c := provision(t, ts.dataDir, "agent", "agent-v")
	c.base = ts.urls["smarthome"]
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             []string
	}{
		{"valid config", "/v1/mqtt-gate/validate", `{"devices":[{"id":"r1","name":"R1","default_name":"R1","model":{"id":"R","manufacturer":"U","model":"U","category":"relay","features":["online","on_off"]}}]}`,
			200, []string{`"kind":"config"`, `"valid":true`}},
		{"unknown and missing", "/v1/mqtt-gate/validate", `{"devices":[{"id":"r1","name":"R1","default_name":"R1","model":{"id":"R","manufacturer":"U","model":"U","category":"relay","features":["online","colour"]}}]}`,
			200, []string{`"valid":false`, `"unknown_features":["colour"]`, `"missing_required":["on_off"]`}},
		{"device without names", "/v1/mqtt-gate/validate", `{"devices":[{"id":"r1","model":{"id":"R","manufacturer":"U","model":"U","category":"relay","features":["online","on_off"]}}]}`,
			200, []string{`"valid":false`, `"errors":["name is required","default_name is required"]`}},
		{"status out of range", "/v1/mqtt-gate/validate?category=light", `{"devices":{"l1":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":"5"}}]}}}`,
			200, []string{`"kind":"status"`, `"reason":"out_of_range"`}},
		{"status enum", "//v1/mqtt-gate/validate", `{"devices":{"p1":{"states":[{"key":"pir","value":{"type":"ENUM","enum_value":"motion"}}]}}}`,
			200, []string{`"reason":"not_in_enum"`}},
		{"malformed", "/v1/mqtt-gate/validate", `{"devices":`, 400, []string{`"code":400`}},
		{"unknown category", "/v1/mqtt-gate/validate?category=toaster", `{"devices":{}}`, 404, []string{`"code":404`, `"details":["category 'toaster' is not supported"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := c.do("POST", tc.path, []byte(tc.body))
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("body lacks %s: %s", w, body)
				}
			}
		})
	}
}

func TestSmarthomeAdminModels(t *testing.T) {
	ts := startServer(t, "--only", "smarthome")
	agent := provision(t, ts.dataDir, "agent", "agent-a")
	admin := provision(t, ts.dataDir, "admin", "root")
	agent.base, admin.base = ts.urls["smarthome"], ts.urls["smarthome"]

	resp, _ := agent.do("GET", "/v1/mqtt-gate/models", nil)
	etag := resp.Header.Get("ETag")
	model := `{"manufacturer":"Acme","model":"S1","category":"socket","features":["online","on_off","power"],
		"allowed_values":{"power":{"type":"INTEGER","integer_values":{"min":"10","max":"45000","step":"1"}}}}`
	resp, body := admin.do("PUT", "/v1/admin/models/acme-s1", []byte(model))
	if resp.StatusCode != 201 || resp.Header.Get("X-Catalog-Version") != "2" {
		t.Fatalf("create: %d %s (version %s)", resp.StatusCode, body, resp.Header.Get("X-Catalog-Version"))
	}
	resp, _ = admin.do("PUT", "/v1/admin/models/acme-s1", []byte(model))
	if resp.StatusCode != 200 || resp.Header.Get("X-Catalog-Version") != "3" {
		t.Fatalf("update: %d", resp.StatusCode)
	}
	resp, body = agent.do("GET", "/v1/mqtt-gate/models", nil, "If-None-Match", etag)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":"acme-s1"`) || resp.Header.Get("ETag") == etag {
		t.Fatalf("agents do not see the change: %d %s", resp.StatusCode, resp.Header.Get("ETag"))
	}
	resp, body = admin.do("PUT", "/v1/admin/models/bad", []byte(`{"manufacturer":"A","model":"B","category":"socket","features":["online"]}`))
	e := wantCommonError(t, resp, body, 400)
	if !strings.Contains(string(body), "required feature 'on_off' is missing") {
		t.Errorf("details %v", e["details"])
	}
	resp, body = admin.do("PUT", "/v1/admin/models/bad", []byte(`{"id":"other","manufacturer":"A","model":"B","category":"hub","features":["online"]}`))
	wantCommonError(t, resp, body, 400)
	resp, body = admin.do("GET", "/v1/admin/models/acme-s1", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"manufacturer":"Acme"`) {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	resp, _ = admin.do("DELETE", "/v1/admin/models/acme-s1", nil)
	if resp.StatusCode != 204 || resp.Header.Get("X-Catalog-Version") != "4" {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	resp, body = admin.do("DELETE", "/v1/admin/models/acme-s1", nil)
	wantCommonError(t, resp, body, 404)

	// The CLI edits the same catalog.
	var out bytes.Buffer
	err := runSmarthome(context.Background(), []string{"model", "delete", "--id", "QWERTY124", "--data-dir", ts.dataDir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	if err != nil || !strings.Contains(out.String(), `"version":5`) {
		t.Fatalf("cli delete: %v %s", err, out.String())
	}
	// Another process's change shows within the server's recheck bound.
	deadline := time.Now().Add(smarthome.DefaultRecheck + time.Second)
	for {
		_, body = agent.do("GET", "/v1/mqtt-gate/models", nil)
		if !strings.Contains(string(body), `"QWERTY124"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("model deleted by the CLI is still served")
		}
		time.Sleep(smarthome.DefaultRecheck / 2)
	}
}

func TestSmarthomeBench(t *testing.T) {
	var out bytes.Buffer
	err := runBench(context.Background(), []string{"smarthome", "--duration", "200ms", "--connections", "2", "--data-dir", t.TempDir()},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"full stack", "bare", "full/bare throughput ratio: ", "p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSmarthomeWireOptions(t *testing.T) {
	ts := startServer(t, "--only", "smarthome", "--smarthome-omit-false-required", "--smarthome-hide-allowed-values", "--smarthome-profile", "2025-11")
	c := provision(t, ts.dataDir, "agent", "agent-o")
	c.base = ts.urls["smarthome"]
	_, body := c.do("GET", "/v1/mqtt-gate/categories", nil)
	if strings.Contains(string(body), "sensor_air") || !strings.Contains(string(body), "sensor_temp") {
		t.Errorf("2025-11 profile: %s", body)
	}
	resp, body := c.do("GET", "/v1/mqtt-gate/categories/sensor_air/features", nil)
	wantCommonError(t, resp, body, 404)
	_, body = c.do("GET", "/v1/mqtt-gate/categories/light/features", nil)
	if string(body) != `{"features":[{"name":"light_brightness","data_type":"INTEGER"},{"name":"light_colour","data_type":"COLOUR"},{"name":"light_colour_temp","data_type":"INTEGER"},{"name":"light_mode","data_type":"ENUM"},{"name":"on_off","data_type":"BOOL","required":true},{"name":"online","data_type":"BOOL","required":true}]}`+"\n" {
		t.Errorf("omit false required: %s", body)
	}
	resp, body = c.do("GET", "/v1/mqtt-gate/models", nil)
	if strings.Contains(string(body), "allowed_values") || !strings.Contains(string(body), "QWERTY123") {
		t.Errorf("hide allowed_values: %s", body)
	}
	if tag := resp.Header.Get("ETag"); tag != `"catalog-1+profile-2025-11+omit-false-required+hide-allowed-values"` {
		t.Errorf("ETag %s does not name the switches", tag)
	}
	// The profile holds for validation and model administration too.
	resp, body = c.do("POST", "/v1/mqtt-gate/validate?category=sensor_air", []byte(`{"devices":{}}`))
	if e := wantCommonError(t, resp, body, 404); !reflect.DeepEqual(e["details"], []any{"category 'sensor_air' is not supported"}) {
		t.Errorf("validate ?category=sensor_air: %s", body)
	}
	_, body = c.do("POST", "/v1/mqtt-gate/validate", []byte(`{"devices":[{"id":"a","name":"A","default_name":"A","model":{"id":"m","manufacturer":"M","model":"X","category":"sensor_air","features":["online","co2"]}}]}`))
	if !strings.Contains(string(body), `"valid":false`) || !strings.Contains(string(body), "category 'sensor_air' is not supported") {
		t.Errorf("validate a sensor_air device: %s", body)
	}
	admin := provision(t, ts.dataDir, "admin", "root-o")
	admin.base = c.base
	resp, body = admin.do("PUT", "/v1/admin/models/air", []byte(`{"manufacturer":"M","model":"X","category":"sensor_air","features":["online","co2"]}`))
	if wantCommonError(t, resp, body, 400); !strings.Contains(string(body), "category 'sensor_air' is not supported") {
		t.Errorf("put a sensor_air model: %s", body)
	}
}

func TestSmarthomeCLI(t *testing.T) {
	dir := t.TempDir()
	run := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		err := runSmarthome(context.Background(), append(args, "--data-dir", dir), func(string) string { return "" },
			stdio{in: strings.NewReader(stdin), out: &out, err: io.Discard})
		return out.String(), err
	}
	if _, err := run("", "agent", "create", "--login", "dup"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		wantErr     string
		wantOut     string
	}{
		{"duplicate login", "", []string{"agent", "create", "--login", "dup"}, "already exists", ""},
		{"bad login", "", []string{"admin", "create", "--login", "a b"}, "invalid login: login must be", ""},
		{"bad agent login", "", []string{"agent", "create", "--login", "a b"}, "invalid login: login must be", ""},
		{"no login", "", []string{"admin", "create"}, "--login is required", ""},
		{"unknown command", "", []string{"agent", "frobnicate"}, "usage:", ""},
		{"rotate", "", []string{"agent", "rotate", "--login", "dup"}, "", `"login":"dup","password":"`},
		{"rotate unknown", "", []string{"agent", "rotate", "--login", "ghost"}, "not found", ""},
		{"delete without login", "", []string{"agent", "delete"}, "--login is required", ""},
		{"delete", "", []string{"agent", "delete", "--login", "dup"}, "", `"deleted":true`},
		{"delete again", "", []string{"agent", "delete", "--login", "dup"}, "not found", ""},
		{"admin of that login untouched", "", []string{"admin", "delete", "--login", "dup"}, "not found", ""},
		{"put invalid model", `{"id":"x","manufacturer":"A","model":"B","category":"kettle","features":["online"]}`,
			[]string{"model", "put"}, "required feature 'on_off' is missing", ""},
		{"put model with two findings", `{"id":"x2"}`,
			[]string{"model", "put"}, "invalid model: category '' is not supported; manufacturer and model are required", ""},
		{"put model with a misspelt member", `{"id":"k0","manufacturer":"A","model":"B","category":"kettle","features":["online","on_off"],"allowed_value":{}}`,
			[]string{"model", "put"}, `unknown field "allowed_value"`, ""},
		{"put model with data after it", `{"id":"k0","manufacturer":"A","model":"B","category":"kettle","features":["online","on_off"]} {}`,
			[]string{"model", "put"}, "model JSON:", ""},
		{"put model", `{"id":"k1","manufacturer":"A","model":"B","category":"kettle","features":["online","on_off"]}`,
			[]string{"model", "put"}, "", `"created":true,"id":"k1","version":2`},
		{"list", "", []string{"model", "list"}, "", `"id":"k1"`},
		{"delete missing", "", []string{"model", "delete", "--id", "nope"}, "not found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(tc.stdin, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tc.wantOut) {
				t.Fatalf("out %q err %v, want %q", out, err, tc.wantOut)
			}
		})
	}
}

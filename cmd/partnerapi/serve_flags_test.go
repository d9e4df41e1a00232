package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// envName is the environment form of a flag: PARTNERAPI_<FLAG>.
func envName(flagName string) string {
	return "PARTNERAPI_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Every flag of serve, including the ones added later, is read from its
// PARTNERAPI_<FLAG> variable, and the command line still wins.
func TestEveryServeFlagHasItsEnvironmentForm(t *testing.T) {
	var cfg serveConfig
	fs := serveFlags(&cfg, modules())
	asked := map[string]bool{}
	if err := parseFlags(fs, nil, func(k string) string { asked[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !asked[envName(f.Name)] {
			t.Errorf("--%s: %s is never read", f.Name, envName(f.Name))
		}
	})

	// The flags added last, each set through the environment to a value
	// other than its default.
	want := map[string]string{
		"assistant-max-body-mb":        "3",
		"banking-client-secret-days":   "7",
		"banking-refresh-reserve":      "30m0s",
		"banking-access-token-ttl":     "5m0s",
		"assistant-token-ttl":          "1m0s",
		"banking-id-token-alg":         "RS256",
		"banking-jws-reversed":         "true",
		"banking-webhook-max-attempts": "3",
		"banking-webhook-backoff":      "2s",
		"banking-webhook-max-backoff":  "1m0s",
		"banking-card-not-found-cause": "DATA_NOT_FOUND_EXCEPTION",
		"shutdown-timeout":             "7s",
		"metrics-addr":                 "127.0.0.1:9100",
		"metrics-tls":                  "off",
		"trusted-proxies":              "10.0.0.0/8,192.0.2.7",
		"max-connections":              "100",
		"banking-webhook-pause":        "0s",
		"banking-webhook-per-partner":  "4",
		"banking-webhook-max-age":      "1h0m0s",
		"banking-webhook-retention":    "48h0m0s",
	}
	env := map[string]string{}
	for name, v := range want {
		env[envName(name)] = v
	}
	env[envName("banking-webhook-backoff")] = "2s"
	var cfg2 serveConfig
	fs = serveFlags(&cfg2, modules())
	if err := parseFlags(fs, []string{"--banking-webhook-max-attempts", "4"}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	want["banking-webhook-max-attempts"] = "4" // the command line wins
	for name, v := range want {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("serve has no --%s", name)
			continue
		}
		if got := f.Value.String(); got != v {
			t.Errorf("--%s from %s = %q, want %q", name, envName(name), got, v)
		}
	}
}

// A value given in the environment reaches the module that checks it: a bad
// one ends serve with the flag's name, as it would on the command line.
func TestServeChecksEnvironmentValues(t *testing.T) {
	for name, bad := range map[string]string{
		"banking-card-not-found-cause": "NOPE",
		"banking-digest":               "order=sideways",
		"banking-webhook-max-attempts": "0",
		"banking-id-token-alg":         "HS256",
		"assistant-max-body-mb":        "-1",
		"max-connections":              "-1",
		"metrics-tls":                  "on",
		"banking-webhook-pause":        "-1s",
		"banking-webhook-per-partner":  "9",
		"banking-webhook-max-age":      "-1s",
		"banking-webhook-retention":    "-1s",
		"smarthome-opaque-credentials": "agent-7=qwerty-1234",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dir := t.TempDir()
			only := strings.SplitN(name, "-", 2)[0]
			if only != "banking" && only != "assistant" {
				only = "smarthome" // a flag of every listener
			}
			env := map[string]string{envName(name): bad, "PARTNERAPI_DATA_DIR": dir, "PARTNERAPI_MODELS_DIR": dir + "/models",
				"PARTNERAPI_BANKING_ADDR": "127.0.0.1:0", "PARTNERAPI_ASSISTANT_ADDR": "127.0.0.1:0", "PARTNERAPI_SMARTHOME_ADDR": "127.0.0.1:0",
				"PARTNERAPI_ASSISTANT_GRPC_ADDR": "127.0.0.1:0", "PARTNERAPI_ONLY": only}
			err := serve(ctx, nil, func(k string) string { return env[k] }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
				t.Errorf("serve started with %s=%s", envName(name), bad)
				cancel()
			})
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("serve with %s=%s: %v", envName(name), bad, err)
			}
		})
	}
}

// readmeFlagRow is one row of the README's tables under "Flags of
// `serve`": the flags its first cell names, in order, and its default cell.
type readmeFlagRow struct {
	flags      []string
	defaultSet string
}

// readmeServeFlagRows reads the rows of the README's flag tables.
func readmeServeFlagRows(t *testing.T) []readmeFlagRow {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## Flags of `serve`")
	if start < 0 {
		t.Fatal("README has no \"Flags of `serve`\" section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rows []readmeFlagRow
	cell := regexp.MustCompile("`(-{1,2}[a-z0-9-]+)`")
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable && strings.TrimSpace(line) != "" {
				// GitHub's Markdown takes a line right after a table as one
				// more row of it.
				t.Errorf("README: a flag table runs into the text after it (no blank line): %.60q", line)
			}
			inTable = false
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		var row readmeFlagRow
		prev := ""
		for _, m := range cell.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if strings.HasPrefix(name, "--") {
				prev = strings.TrimPrefix(name, "--")
				row.flags = append(row.flags, prev)
				continue
			}
			// `--assistant-limit-pers`, `-b2b`, `-corp`: a suffix replacing
			// the last part of the flag before it.
			if i := strings.LastIndex(prev, "-"); prev != "" && i > 0 {
				row.flags = append(row.flags, prev[:i]+name)
			}
		}
		if len(row.flags) > 0 {
			row.defaultSet = strings.TrimSpace(cells[2])
			rows = append(rows, row)
		}
	}
	return rows
}

// readmeListeners is the README's Listeners table: each service's default
// address by the name in its first cell ("banking", "smart home" as
// "smarthome", "assistant gRPC").
func readmeListeners(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## Listeners")
	if start < 0 {
		t.Fatal("README has no Listeners section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue
		}
		name := strings.TrimSpace(cells[1])
		if name == "smart home" {
			name = "smarthome"
		}
		out[name] = strings.Trim(strings.TrimSpace(cells[2]), "`")
	}
	return out
}

// The README's tables under "Flags of `serve`" list exactly the flags of
// `serve --help`: a flag added without its row, or a row left behind by a
// removed flag, fails here.
func TestReadmeFlagTablesMatchServeFlags(t *testing.T) {
	documented := map[string]bool{}
	for _, row := range readmeServeFlagRows(t) {
		for _, name := range row.flags {
			documented[name] = true
		}
	}
	var cfg serveConfig
	fs := serveFlags(&cfg, modules())
	served := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { served[f.Name] = true })
	var missing, extra []string
	for name := range served {
		if !documented[name] {
			missing = append(missing, "--"+name)
		}
	}
	for name := range documented {
		if !served[name] {
			extra = append(extra, "--"+name)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("flags of serve --help missing from the README's flag tables: %s", strings.Join(missing, " "))
	}
	if len(extra) > 0 {
		t.Errorf("README flag tables name flags serve does not have: %s", strings.Join(extra, " "))
	}
}

// The README's default column says what `serve -h` says: a reader who
// leaves a flag out gets the value the table promised. A row naming several
// flags gives their defaults in order, comma-separated; an empty cell, or
// none in a row of several, means no default (empty, off, 0); off and on are
// a switch's false and true; DATA_DIR/... is a file the flag's empty default
// puts in the data directory; "see above" is the Listeners table's address;
// other words outside backticks ("model's", "the listener") describe a
// default the test does not read.
func TestReadmeFlagDefaultsMatchServeFlags(t *testing.T) {
	var cfg serveConfig
	fs := serveFlags(&cfg, modules())
	same := func(readme, def string) bool {
		if readme == def {
			return true
		}
		a, errA := time.ParseDuration(readme)
		b, errB := time.ParseDuration(def)
		return errA == nil && errB == nil && a == b
	}
	listeners := readmeListeners(t)
	if got, want := listeners["assistant gRPC"], fs.Lookup("assistant-grpc-addr").DefValue; got != want {
		t.Errorf("README: the Listeners table has the assistant's gRPC port at %q, serve's default is %q", got, want)
	}
	for _, row := range readmeServeFlagRows(t) {
		var parts []string
		if row.defaultSet != "" {
			parts = strings.Split(row.defaultSet, ", ")
		}
		if len(parts) == 1 && len(row.flags) > 1 {
			// One default for the row's flags alike ("see above").
			for len(parts) < len(row.flags) {
				parts = append(parts, parts[0])
			}
		}
		if len(parts) > 0 && len(parts) != len(row.flags) {
			t.Errorf("README: the row of %s gives %d defaults for %d flags: %q", strings.Join(row.flags, ", "), len(parts), len(row.flags), row.defaultSet)
			continue
		}
		for i, name := range row.flags {
			f := fs.Lookup(name)
			if f == nil {
				continue // TestReadmeFlagTablesMatchServeFlags reports it
			}
			def := f.DefValue
			// A flag.Func has no default of its own to show: its usage
			// says "(default X)" instead, which is what -h prints.
			if m := regexp.MustCompile(`\(default ([^)]+)\)$`).FindStringSubmatch(f.Usage); def == "" && m != nil {
				def = m[1]
			}
			var want string
			switch {
			case len(parts) == 0 || parts[i] == "none":
				if def != "" && def != "false" && def != "0" {
					t.Errorf("README: --%s has no default in its table, serve's is %q", name, def)
				}
				continue
			case parts[i] == "off":
				want = "false"
				if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool {
					want = ""
				}
			case parts[i] == "on":
				want = "true"
			case parts[i] == "see above":
				// The listen addresses: the Listeners table's.
				var ok bool
				if want, ok = listeners[strings.TrimSuffix(name, "-addr")]; !ok {
					t.Errorf("README: --%s's default is \"see above\", and the Listeners table has no row for it", name)
					continue
				}
			case strings.HasPrefix(parts[i], "`") && strings.HasSuffix(parts[i], "`"):
				want = strings.Trim(parts[i], "`")
				if strings.HasPrefix(want, "DATA_DIR/") {
					want = ""
				}
			default:
				continue
			}
			if !same(want, def) {
				t.Errorf("README: --%s defaults to %q, serve's default is %q", name, want, def)
			}
		}
	}
}

// noEnv is a getenv with nothing set.
func noEnv(string) string { return "" }

// subcommandFlags are the commands besides serve whose flags the tests
// below tie to their PARTNERAPI_<FLAG> forms and to the README. stop is a
// command line that ends the command with the error containing stopErr
// right after its flags are read, before it touches anything.
var subcommandFlags = []struct {
	path    []string
	stop    []string
	stopErr string
}{
	{path: []string{"models", "pull"}, stopErr: "takes one SOURCE"},
	{path: []string{"models", "list"}, stop: []string{"extra"}, stopErr: "takes no arguments"},
	{path: []string{"models", "rm"}, stopErr: "usage"},
	{path: []string{"generate"}, stopErr: "--model is required"},
}

// subcommandFlagSet is the flag set of the command at path, as its -h
// answer carries it.
func subcommandFlagSet(t *testing.T, path []string) *flag.FlagSet {
	t.Helper()
	err := run(context.Background(), append(append([]string(nil), path...), "-h"), noEnv, stdio{out: io.Discard, err: io.Discard})
	var h errHelp
	if !errors.As(err, &h) {
		t.Fatalf("%s -h: %v, want its usage", strings.Join(path, " "), err)
	}
	return h.fs
}

// Every flag of models and generate, like serve's, is read from its
// PARTNERAPI_<FLAG> variable.
func TestEverySubcommandFlagHasItsEnvironmentForm(t *testing.T) {
	for _, c := range subcommandFlags {
		t.Run(strings.Join(c.path, " "), func(t *testing.T) {
			fs := subcommandFlagSet(t, c.path)
			asked := map[string]bool{}
			args := append(append([]string(nil), c.path...), c.stop...)
			err := run(context.Background(), args, func(k string) string { asked[k] = true; return "" }, stdio{out: io.Discard, err: io.Discard})
			if err == nil || !strings.Contains(err.Error(), c.stopErr) {
				t.Fatalf("%q: %v, want an error containing %q", args, err, c.stopErr)
			}
			n := 0
			fs.VisitAll(func(f *flag.Flag) {
				n++
				if !asked[envName(f.Name)] {
					t.Errorf("--%s: %s is never read", f.Name, envName(f.Name))
				}
			})
			if n == 0 {
				t.Fatal("the command has no flags")
			}
		})
	}
}

// A value in the environment reaches the command, and the command line
// still wins over it.
func TestSubcommandsTakeEnvironmentValues(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	model := filepath.Join(dir, "absent-model.gguf")
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // in the error, or when empty:
		wantOut string // on stderr
	}{
		{name: "generate model", args: []string{"generate"}, env: map[string]string{"PARTNERAPI_MODEL": model}, wantErr: "absent-model.gguf"},
		{name: "generate n", args: []string{"generate"}, env: map[string]string{"PARTNERAPI_MODEL": model, "PARTNERAPI_N": "0"}, wantErr: "-n must be positive"},
		{name: "generate command line wins", args: []string{"generate", "-n", "5"}, env: map[string]string{"PARTNERAPI_MODEL": model, "PARTNERAPI_N": "0"}, wantErr: "absent-model.gguf"},
		{name: "generate bad value names its variable", args: []string{"generate"}, env: map[string]string{"PARTNERAPI_TEMPERATURE": "warm"}, wantErr: "PARTNERAPI_TEMPERATURE"},
		{name: "models list dir", args: []string{"models", "list"}, env: map[string]string{"PARTNERAPI_MODELS_DIR": dir}, wantOut: "no models in " + dir},
		{name: "models list command line wins", args: []string{"models", "list", "--models-dir", other}, env: map[string]string{"PARTNERAPI_MODELS_DIR": dir}, wantOut: "no models in " + other},
		// The pulls below stop at a check made before any download.
		{name: "models pull name", args: []string{"models", "pull", "https://example.invalid/x.gguf"},
			env: map[string]string{"PARTNERAPI_MODELS_DIR": dir, "PARTNERAPI_NAME": "bad/name"}, wantErr: `"bad/name"`},
		{name: "models pull sha256", args: []string{"models", "pull", "https://example.invalid/x.gguf"},
			env: map[string]string{"PARTNERAPI_MODELS_DIR": dir, "PARTNERAPI_SHA256": "not-hex"}, wantErr: `"not-hex"`},
		{name: "models pull hf endpoint", args: []string{"models", "pull", "hf.co/owner/repo/x.gguf"},
			env: map[string]string{"PARTNERAPI_MODELS_DIR": dir, "PARTNERAPI_HF_ENDPOINT": "ftp://mirror.example"}, wantErr: "ftp://mirror.example"},
		{name: "models pull hf endpoint over HF_ENDPOINT", args: []string{"models", "pull", "hf.co/owner/repo/x.gguf"},
			env: map[string]string{"PARTNERAPI_MODELS_DIR": dir, "PARTNERAPI_HF_ENDPOINT": "ftp://mirror.example", "HF_ENDPOINT": "https://hf.example"}, wantErr: "ftp://mirror.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, stdio{in: strings.NewReader(""), out: io.Discard, err: &stderr})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%q: %v, want an error containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(stderr.String(), tc.wantOut) {
				t.Fatalf("%q: %v, stderr %q; want %q there", tc.args, err, stderr.String(), tc.wantOut)
			}
		})
	}
}

// The README names every flag of models and generate on its usage line for
// the command, from "partnerapi <command>" to the next command or the end
// of the line, as the flag tables name serve's.
func TestReadmeNamesSubcommandFlags(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	if !strings.Contains(readme, "Every command's flags, not only serve's") {
		t.Error("README does not say that every command's flags have PARTNERAPI_<FLAG> forms")
	}
	for _, c := range subcommandFlags {
		name := "partnerapi " + strings.Join(c.path, " ")
		t.Run(name, func(t *testing.T) {
			var usage []string
			for _, line := range strings.Split(readme, "\n") {
				for rest := line; ; {
					i := strings.Index(rest, name+" ")
					if i < 0 {
						break
					}
					rest = rest[i+len(name):]
					u := rest
					if j := strings.Index(u, "partnerapi "); j >= 0 {
						u = u[:j]
					}
					usage = append(usage, u)
				}
			}
			if len(usage) == 0 {
				t.Fatalf("README has no usage line for %s", name)
			}
			all := strings.Join(usage, "\n")
			subcommandFlagSet(t, c.path).VisitAll(func(f *flag.Flag) {
				if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(all) {
					t.Errorf("README's usage of %s lacks --%s", name, f.Name)
				}
			})
		})
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

// stories260KSHA256 is the published digest of the shared test model
// (../shared/models/README.md).
const stories260KSHA256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"

// hubServer serves one file under /OWNER/REPO/resolve/main/FILE like the
// Hub: ETag is the sha256 unless etag is given; it records the tokens seen.
func hubServer(t *testing.T, path string, content []byte, etag string) (*httptest.Server, *atomic.Value) {
	t.Helper()
	var auth atomic.Value
	auth.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
		}
		http.ServeContent(w, r, "f.gguf", time.Time{}, bytes.NewReader(content))
	}))
	t.Cleanup(srv.Close)
	return srv, &auth
}

func runModelsCLI(env map[string]string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = runModels(context.Background(), args, func(k string) string { return env[k] },
		stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), err
}

// TestModelsPullListRemove pulls the real stories260K from a fake Hub,
// checks the engine serves it, lists it, and removes it.
func TestModelsPullListRemove(t *testing.T) {
	content, err := os.ReadFile(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	srv, auth := hubServer(t, "/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf", content, `"`+stories260KSHA256+`"`)
	dir := filepath.Join(t.TempDir(), "models")
	env := map[string]string{"HF_ENDPOINT": srv.URL, "HF_TOKEN": "hf_test", "PARTNERAPI_MODELS_DIR": dir}

	out, errs, err := runModelsCLI(env, "pull", "hf.co/ggml-org/models/tinyllamas/stories260K.gguf")
	if err != nil {
		t.Fatalf("pull: %v\n%s", err, errs)
	}
	if auth.Load() != "Bearer hf_test" {
		t.Errorf("the Hub saw Authorization %q", auth.Load())
	}
	if !strings.Contains(out, "sha256 "+stories260KSHA256+" verified (ETag)") || !strings.Contains(out, "llama, F32") {
		t.Errorf("pull output:\n%s", out)
	}
	// Not a terminal: a line each time a 10 % step is crossed (a 256 KiB
	// read may cross two of this 1.1 MiB file's), ending at 100 %.
	lines := regexp.MustCompile(`stories260K\.gguf: (\d+)% `).FindAllStringSubmatch(errs, -1)
	prev := 0
	for _, l := range lines {
		var pct int
		fmt.Sscan(l[1], &pct)
		if pct <= prev || pct%10 != 0 {
			t.Errorf("progress line %q after %d%%", l[0], prev)
		}
		prev = pct
	}
	if len(lines) < 4 || prev != 100 {
		t.Errorf("progress lines %v in:\n%s", lines, errs)
	}

	e, err := local.Open(dir, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := e.Models(context.Background())
	e.Close()
	if len(ms) != 1 || ms[0].Name != "stories260K" {
		t.Fatalf("engine serves %+v", ms)
	}

	out, _, err = runModelsCLI(env, "list")
	want := "stories260K:1.0\tchat\tcontext=2048\tfunctions=false\tsize=1.13 MiB\tarch=llama\tquant=F32\tsha256=" + stories260KSHA256 + "\n"
	if err != nil || out != want {
		t.Fatalf("list: %v\n%q\nwant\n%q", err, out, want)
	}

	// A second pull is refused; with the same --sha256 it is a no-op.
	if _, _, err := runModelsCLI(env, "pull", "hf.co/ggml-org/models/tinyllamas/stories260K.gguf"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second pull: %v", err)
	}
	out, _, err = runModelsCLI(env, "pull", "--sha256", stories260KSHA256, "hf.co/ggml-org/models/tinyllamas/stories260K.gguf", "--quiet")
	if err != nil || !strings.Contains(out, "already in") {
		t.Errorf("pull of a present model: %v\n%s", err, out)
	}

	out, _, err = runModelsCLI(env, "rm", "stories260K")
	if err != nil || !strings.Contains(out, "removed "+filepath.Join(dir, "stories260K.gguf")) {
		t.Fatalf("rm: %v\n%s", err, out)
	}
	out, errs, err = runModelsCLI(env, "list")
	if err != nil || out != "" || !strings.Contains(errs, "models pull") {
		t.Errorf("list after rm: %v %q %q", err, out, errs)
	}
}

// models list reports a manifest serve would refuse (a type it does not
// serve, a version no GET /api/v1/models/{id} could name) as an ERROR
// line, as it does one that does not parse, not as a model.
func TestModelsListRefusesManifestType(t *testing.T) {
	for _, tc := range []struct{ manifest, want string }{
		{`{"type":"embeddings"}`, `"embeddings"`},
		{`{"version":"2.0/rc1"}`, `"2.0/rc1"`},
	} {
		dir := t.TempDir()
		if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "emb.gguf")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "emb.json"), []byte(tc.manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, err := runModelsCLI(map[string]string{"PARTNERAPI_MODELS_DIR": dir}, "list")
		if err != nil || !strings.HasPrefix(out, "emb\tERROR\t") || !strings.Contains(out, tc.want) {
			t.Errorf("list with %s: %v\n%q", tc.manifest, err, out)
		}
	}
}

// models list reports a model file serve would refuse for a ':' in its
// name as an ERROR line, not as a model id no request can name.
func TestModelsListRefusesColonInName(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "tiny:7b.gguf")); err != nil {
		t.Fatal(err)
	}
	out, _, err := runModelsCLI(map[string]string{"PARTNERAPI_MODELS_DIR": dir}, "list")
	if err != nil || !strings.HasPrefix(out, "tiny:7b\tERROR\t") || !strings.Contains(out, "rename") {
		t.Errorf("list: %v\n%q", err, out)
	}
}

func TestModelsPullErrors(t *testing.T) {
	content := []byte("<html>not a model</html>")
	srv, _ := hubServer(t, "/o/r/resolve/main/page.gguf", content, `"v1"`)
	dir := t.TempDir()
	env := map[string]string{"PARTNERAPI_MODELS_DIR": dir}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pull"}, "one SOURCE"},
		{[]string{"pull", "a", "b"}, "one SOURCE"},
		{[]string{"pull", "ftp://x/y.gguf"}, "only http(s)"},
		{[]string{"pull", srv.URL + "/download"}, "pass --name"},
		{[]string{"pull", "--hf-endpoint", srv.URL, "hf.co/o/r/missing.gguf"}, "404 Not Found: no such file in o/r"},
		{[]string{"pull", "--hf-endpoint", srv.URL, "hf.co/o/r/page.gguf"}, "looks like an HTML"},
		{[]string{"pull", "--hf-endpoint", srv.URL, "hf.co/o/r:Q8_0"}, "api/models/o/r: 404 Not Found"},
		{[]string{"pull", "--hf-endpoint", srv.URL, "--name", "../x", "hf.co/o/r/page.gguf"}, "model name"},
		{[]string{"pull", "--hf-endpoint", srv.URL, "--sha256", "00", "hf.co/o/r/page.gguf"}, "64 hex digits"},
		{[]string{"rm"}, "usage"},
		{[]string{"rm", "nothing"}, "no such model"},
		{[]string{"list", "extra"}, "no arguments"},
		{[]string{"frobnicate"}, "unknown models command"},
		{nil, "usage"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := runModelsCLI(env, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if fis, _ := os.ReadDir(dir); len(fis) > 1 { // only .partial/ may exist
		t.Errorf("failed pulls left files: %v", fis)
	}
}

func TestPullProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newPullProgress(&buf, "m.gguf", true)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	const total = 10 << 20
	// 1000 chunks over 2 simulated seconds: at most ~10 redraws a second.
	for i := 1; i <= 1000; i++ {
		clock = clock.Add(2 * time.Millisecond)
		p.update(int64(i)*total/1000, total)
		if i == 500 {
			p.note("retrying in 1s: boom")
		}
	}
	p.finish()
	out := buf.String()
	draws := strings.Count(out, "\r")
	if draws < 15 || draws > 26 {
		t.Errorf("%d redraws for 2s of progress", draws)
	}
	if !strings.Contains(out, " 50% [============            ] 5.00 MiB / 10.0 MiB  5.00 MiB/s  ETA 1s") {
		t.Errorf("no mid-way bar with rate and ETA in %q", out)
	}
	if !strings.Contains(out, "\r\x1b[Km.gguf: retrying in 1s: boom\n") || !strings.HasSuffix(out, "100% [========================] 10.0 MiB / 10.0 MiB  5.00 MiB/s\x1b[K\n") {
		t.Errorf("note or final bar wrong: %q", out[max(0, len(out)-300):])
	}
}

func TestPullProgressLog(t *testing.T) {
	var buf bytes.Buffer
	p := newPullProgress(&buf, "m.gguf", false)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	// Resumed at 35 %: lines for 40 %..100 % only.
	for done := int64(350); done <= 1000; done += 7 {
		clock = clock.Add(time.Second)
		p.update(min(done, 1000), 1000)
	}
	p.update(1000, 1000)
	got := regexp.MustCompile(`(\d+)% \(`).FindAllStringSubmatch(buf.String(), -1)
	var pct []string
	for _, g := range got {
		pct = append(pct, g[1])
	}
	if fmt.Sprint(pct) != "[40 50 60 70 80 90 100]" {
		t.Errorf("lines %v:\n%s", pct, buf.String())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1185376: "1.13 MiB", 5 << 30: "5.00 GiB", 150 << 20: "150 MiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestServeEmptyModelsDirSaysHowToPull(t *testing.T) {
	ts := startServer(t, "--only", "assistant")
	if !strings.Contains(ts.logs.String(), "partnerapi models pull hf.co/OWNER/REPO/FILE.gguf") {
		t.Fatalf("serve with no models does not say how to pull one:\n%s", ts.logs.String())
	}
}

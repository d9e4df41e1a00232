package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestReadmeCIScript runs the README's "Using it in CI" script as written,
// two copies at once from the repository's root as two CI jobs on one
// machine would: each builds the binary, starts serve on free ports and a
// data directory of its own, waits for its ready file, creates its fixtures
// with the CI's fixed credentials, passes its smoke tests against all three
// APIs and stops serve, leaving nothing behind.
func TestReadmeCIScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	for _, tool := range []string{"sh", "go", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPING: %s not installed; the README's CI script did not run", tool)
		}
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "\n## Using it in CI\n")
	if start < 0 {
		t.Fatal(`README: no "Using it in CI" section`)
	}
	section := readme[start:]
	open := strings.Index(section, "```sh\n")
	if open < 0 {
		t.Fatal(`README: no sh block under "Using it in CI"`)
	}
	script := section[open+len("```sh\n"):]
	script = script[:strings.Index(script, "```")]
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"CI_BANKING_SECRET=ci-bank-secret-0123456789abcdefghijklmno",
		"CI_ASSISTANT_ID=6f1c2d3e-4b5a-4c6d-8e7f-901234567890",
		"CI_ASSISTANT_SECRET=00112233445566778899aabbccddeeff",
		"CI_AGENT_PASSWORD=ci_agent_password_0123456789abcdef")
	var wg sync.WaitGroup
	for job := range 2 {
		tmp := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = root
			// Each job's mktemp under a directory of its own, so that
			// what a job leaves behind can be seen. The slice is the
			// job's own: appending to the shared env could write both
			// jobs' TMPDIR into one spare slot of its backing array.
			cmd.Env = slices.Concat(env, []string{"TMPDIR=" + tmp})
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Errorf("job %d: the README's CI script: %v\n%s", job, err, out.String())
				return
			}
			if !strings.Contains(out.String(), "partnerapi CI: all passed") {
				t.Errorf("job %d: the README's CI script did not reach its end:\n%s", job, out.String())
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("job %d: the script left %d entries in its TMPDIR, e.g. %s", job, len(left), left[0].Name())
			}
		}()
	}
	wg.Wait()
}

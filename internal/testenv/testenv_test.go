package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// verdictTB records whether a helper skipped or failed the test and, as
// testing.T does, ends the goroutine that called it there.
type verdictTB struct {
	testing.TB
	skipped, failed string
}

func (v *verdictTB) Helper() {}
func (v *verdictTB) Skipf(format string, args ...any) {
	v.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (v *verdictTB) Skip(args ...any) {
	v.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (v *verdictTB) Fatalf(format string, args ...any) {
	v.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// verdict runs Model(name) as a test of its own would.
func verdict(t *testing.T, name string) *verdictTB {
	v := &verdictTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Model(v, name)
	}()
	<-done
	return v
}

// A test that names a shared model skips only when ../shared/models is
// absent; with the directory there, a missing file fails the test, so
// that a target such as FuzzEncodeDecode cannot stop running unnoticed.
func TestModelSkipsOnlyWithoutTheDirectory(t *testing.T) {
	withModels := t.TempDir()
	if err := os.MkdirAll(filepath.Join(withModels, "models", "vocab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withModels, "models", "vocab", "there.gguf"), []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, shared, file string
		skip, fail         bool
	}{
		{"file there", withModels, "vocab/there.gguf", false, false},
		{"file missing", withModels, "vocab/missing.gguf", false, true},
		{"directory missing", t.TempDir(), "vocab/there.gguf", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PARTNERAPI_SHARED_DIR", tc.shared)
			v := verdict(t, tc.file)
			if (v.skipped != "") != tc.skip || (v.failed != "") != tc.fail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", v.skipped, v.failed, tc.skip, tc.fail)
			}
		})
	}
}

package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedVNNITilesUpToDate regenerates the VNNI tile assembly into a
// temporary directory and compares it with the committed files, so an edit
// of the generated files or of the generator alone cannot land unnoticed.
func TestGeneratedVNNITilesUpToDate(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: cannot check the generated VNNI tiles")
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, "gen_tile_vnni.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen_tile_vnni.py: %v\n%s", err, out)
	}
	for _, name := range []string{"tile_vnni_q8_0_amd64.s", "tile_vnni_q4_0_amd64.s"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what gen_tile_vnni.py writes: run go generate ./internal/inference/kernels", name)
		}
	}
}

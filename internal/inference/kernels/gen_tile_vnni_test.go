package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedVNNITilesUpToDate regenerates the VNNI tile assembly, the
// packed kernels (K-quants too), the int8 attention kernels (AVX-512, over
// blocked keys and values, and AVX2) and the AVX2 multi-row one-token
// kernels into a temporary directory and compares
// them with the committed files, so an edit of the generated files or of a generator
// alone cannot land unnoticed.
func TestGeneratedVNNITilesUpToDate(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: cannot check the generated VNNI tiles")
	}
	dir := t.TempDir()
	for _, gen := range []string{"gen_tile_vnni.py", "gen_tile_packed.py", "gen_tile_packed_avx2.py", "gen_attn_q8.py", "gen_attn_q8_avx2.py", "gen_attn_q8_i16.py", "gen_tile_rows.py",
		"gen_attn_q8_blocks.py", "gen_attn_q8_vsums.py", "gen_tile_packed_kquant.py", "gen_tile_packed_kquant_avx2.py"} {
		if out, err := exec.Command(py, gen, dir).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", gen, err, out)
		}
	}
	for _, name := range []string{"tile_vnni_q8_0_amd64.s", "tile_vnni_q4_0_amd64.s", "tile_packed_q8_0_amd64.s", "tile_packed_q4_0_amd64.s", "tile_packed_q4_0_gfni_amd64.s",
		"tile_packed_avx2_q8_0_amd64.s", "tile_packed_avx2_q4_0_amd64.s",
		"attn_q8_scores_amd64.s", "attn_q8_sums_amd64.s", "attn_q8_avx2_amd64.s", "attn_q8_i16_amd64.s", "tile_rows_amd64.s",
		"attn_q8_blocks_amd64.s", "attn_q8_vsums_amd64.s", "tile_packed_q4_k_amd64.s", "tile_packed_q6_k_amd64.s",
		"tile_packed_avx2_q2_k_amd64.s", "tile_packed_avx2_q3_k_amd64.s", "tile_packed_avx2_q4_k_amd64.s", "tile_packed_avx2_q6_k_amd64.s"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what its generator writes: run go generate ./internal/inference/kernels", name)
		}
	}
}

package modelstore

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkPullVsRawGet times, side by side in each iteration, a plain GET
// copied into a file (the floor) and a Pull of the same 64 MiB GGUF over
// loopback (sha256, GGUF check, fsync, rename on top), and reports both
// rates and their ratio.
func BenchmarkPullVsRawGet(b *testing.B) {
	data := make([]byte, 4096*4096*4)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, []gguf.KV{{Key: "general.architecture", Value: gguf.StringValue("llama")}},
		[]gguf.WriteTensor{{Name: "w", Dims: []uint64{4096, 4096}, Type: gguf.F32, Data: data}}); err != nil {
		b.Fatal(err)
	}
	content := buf.Bytes()
	etag := `"` + sha256Hex(content) + `"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "m.gguf", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	src, err := ParseSource("hf.co/o/r/m.gguf", srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	var raw, pull time.Duration
	for b.Loop() {
		dir := b.TempDir()
		t0 := time.Now()
		resp, err := http.Get(src.URL)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "raw.gguf"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		f.Close()
		t1 := time.Now()
		if _, err := (&Store{Dir: dir}).Pull(context.Background(), src, PullOptions{}); err != nil {
			b.Fatal(err)
		}
		raw, pull = raw+t1.Sub(t0), pull+time.Since(t1)
	}
	mb := float64(len(content)) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/raw.Seconds(), "raw-MiB/s")
	b.ReportMetric(mb/pull.Seconds(), "pull-MiB/s")
	b.ReportMetric(pull.Seconds()/raw.Seconds(), "pull/raw")
}

package modelstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// TestPullSameNameConcurrently: while one pull of a name is downloading, a
// second pull (or rm) of that name is refused by the lock instead of writing
// into the same part file; a pull of another name goes ahead.
func TestPullSameNameConcurrently(t *testing.T) {
	content := testGGUF(t, 8)
	gate := make(chan struct{})
	e := newPullEnv(t, &fileServer{content: content, gate: gate}, nil)
	first := make(chan error, 1)
	go func() {
		_, err := e.pull(context.Background(), t, PullOptions{})
		first <- err
	}()
	// Wait until the first pull holds the lock and its request is waiting.
	for deadline := time.Now().Add(10 * time.Second); len(e.files.requestLog()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("first pull never reached the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.pull(context.Background(), t, PullOptions{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second pull of the same name: %v, want ErrBusy", err)
	}
	if _, err := e.store.Remove("tiny"); !errors.Is(err, ErrBusy) {
		t.Fatalf("rm during a pull: %v, want ErrBusy", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := e.pull(context.Background(), t, PullOptions{Name: "other"}); err != nil {
			t.Errorf("pull of another name: %v", err)
		}
	}()
	close(gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	e.checkInstalled(t, "tiny", content)
	e.checkInstalled(t, "other", content)
}

// TestLockExcludesWhileDeletingItsFile: the lock file is deleted as each
// holder finishes, and still no two holders of a name ever overlap: one
// that locked a file already deleted (it opened it just before) sees that
// the path names another file and tries again instead of going ahead
// beside the holder of the new one.
func TestLockExcludesWhileDeletingItsFile(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	var holders, most, held atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				unlock, err := s.lock("tiny")
				if errors.Is(err, ErrBusy) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				n := holders.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				held.Add(1)
				time.Sleep(20 * time.Microsecond)
				holders.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 || held.Load() == 0 {
		t.Fatalf("at most %d holders at once over %d locks, want 1", most.Load(), held.Load())
	}
	if _, err := os.Stat(s.lockPath("tiny")); !errors.Is(err, os.ErrNotExist) && runtime.GOOS != "windows" {
		t.Errorf("lock file left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, partialDir)); !errors.Is(err, os.ErrNotExist) && runtime.GOOS != "windows" {
		t.Errorf("empty %s left behind: %v", partialDir, err)
	}
}

func TestPullExistingModel(t *testing.T) {
	v1, v2 := testGGUF(t, 9), testGGUF(t, 10)
	fs := &fileServer{content: v1}
	e := newPullEnv(t, fs, nil)
	if _, err := e.pull(context.Background(), t, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		opts      PullOptions
		wantErr   error
		present   bool
		installed []byte
		requests  int
	}{
		{name: "refused without --force", wantErr: ErrExists, installed: v1},
		{name: "same --sha256 is a no-op", opts: PullOptions{SHA256: sha256Hex(v1)}, present: true, installed: v1},
		{name: "other --sha256 is refused", opts: PullOptions{SHA256: sha256Hex(v2)}, wantErr: ErrExists, installed: v1},
		{name: "--force replaces", opts: PullOptions{Force: true}, installed: v2, requests: 1},
	}
	fs.mu.Lock()
	fs.content = v2
	fs.mu.Unlock()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fs.requestLog())
			res, err := e.pull(context.Background(), t, tc.opts)
			if !errors.Is(err, tc.wantErr) || res.AlreadyPresent != tc.present {
				t.Fatalf("pull: %+v, %v; want err %v, present %v", res, err, tc.wantErr, tc.present)
			}
			e.checkInstalled(t, "tiny", tc.installed)
			if n := len(fs.requestLog()) - before; n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestListAndRemove(t *testing.T) {
	content := testGGUF(t, 11)
	e := newPullEnv(t, &fileServer{content: content}, nil)
	if _, err := e.pull(context.Background(), t, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := e.store.Dir
	// A model copied in by hand (no sidecar), a broken file and a manifest.
	if err := os.WriteFile(filepath.Join(dir, "copied.gguf"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.gguf"), []byte("GGUF\x03\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tiny.json"), []byte(`{"version":"2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	models, partials, err := e.store.List()
	if err != nil || len(partials) != 0 || len(models) != 3 {
		t.Fatalf("list: %+v %+v %v", models, partials, err)
	}
	want := Info{Arch: "llama", Quant: "Q8_0", ContextLength: 4096, Tensors: 1}
	if m := models[0]; m.Name != "broken" || m.Err == nil {
		t.Errorf("broken: %+v", m)
	}
	if m := models[1]; m.Name != "copied" || m.SHA256 != "" || m.Info != want || m.Err != nil {
		t.Errorf("copied: %+v", m)
	}
	if m := models[2]; m.Name != "tiny" || m.SHA256 != sha256Hex(content) || m.Size != int64(len(content)) || m.Info != want {
		t.Errorf("tiny: %+v", m)
	}

	removed, err := e.store.Remove("tiny")
	if err != nil || len(removed) != 2 {
		t.Fatalf("rm: %v %v", removed, err)
	}
	for _, p := range []string{"tiny.gguf", "tiny.gguf.sha256"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tiny.json")); err != nil {
		t.Errorf("the manifest was removed: %v", err)
	}
	if _, err := e.store.Remove("tiny"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second rm: %v", err)
	}
	if _, err := e.store.Remove("../etc"); err == nil {
		t.Error("rm accepted a path")
	}
}

func TestInspectWithoutFileType(t *testing.T) {
	// Without general.file_type the tensor type holding most bytes names
	// the quantisation (stories260K is all F32 and has no file_type).
	var buf bytes.Buffer
	err := gguf.Write(&buf, []gguf.KV{{Key: "general.architecture", Value: gguf.StringValue("qwen2")}}, []gguf.WriteTensor{
		{Name: "a", Dims: []uint64{64, 4}, Type: gguf.F32, Data: make([]byte, 64*4*4)},
		{Name: "b", Dims: []uint64{64, 64}, Type: gguf.F16, Data: make([]byte, 64*64*2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := Inspect(p)
	if err != nil || info != (Info{Arch: "qwen2", Quant: "F16", Tensors: 2}) {
		t.Fatalf("inspect: %+v, %v", info, err)
	}
	if got := fileTypeName(99); got != "file_type=99" {
		t.Errorf("unknown file type named %q", got)
	}
}

package modelstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// testGGUF builds a small valid GGUF model file (one 256×256 F32 tensor,
// about 256 KiB) whose bytes depend on seed.
func testGGUF(t testing.TB, seed uint64) []byte {
	t.Helper()
	data := make([]byte, 256*256*4)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range data {
		data[i] = byte(r.UintN(256))
	}
	var buf bytes.Buffer
	err := gguf.Write(&buf, []gguf.KV{
		{Key: "general.architecture", Value: gguf.StringValue("llama")},
		{Key: "general.file_type", Value: gguf.Uint32Value(7)},
		{Key: "llama.context_length", Value: gguf.Uint32Value(4096)},
	}, []gguf.WriteTensor{{Name: "token_embd.weight", Dims: []uint64{256, 256}, Type: gguf.F32, Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileServer serves one file like the Hub's CDN does (ranges, If-Range on
// the ETag, 416 past the end) with switches for misbehaviour.
type fileServer struct {
	mu          sync.Mutex
	content     []byte
	etag        string // `"<sha256>"` unless set
	ignoreRange bool   // answer 200 with the whole file even to a Range
	cutAt       []int  // per request: drop the connection after this many body bytes (0: never)
	stallAt     int    // first request: send this many body bytes, then hang until the client gives up
	status      []int  // per request: answer this status instead (0: serve)
	requests    []*http.Request
	statuses    []int         // status of each answer, recorded as its header is written
	gate        chan struct{} // if set, each request waits for it before serving
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, r.Clone(context.Background()))
	content, etag := s.content, s.etag
	var status, cut int
	if n < len(s.status) {
		status = s.status[n]
	}
	if n < len(s.cutAt) {
		cut = s.cutAt[n]
	}
	stall := n == 0 && s.stallAt > 0
	gate := s.gate
	s.mu.Unlock()
	w = &statusRecorder{ResponseWriter: w, record: func(code int) {
		s.mu.Lock()
		s.statuses = append(s.statuses, code)
		s.mu.Unlock()
	}}
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case status == -1: // claims an exabyte
		w.Header().Set("Content-Length", "1000000000000000000")
		w.WriteHeader(http.StatusOK)
		return
	case status != 0:
		http.Error(w, http.StatusText(status), status)
		return
	}
	if etag == "" {
		etag = `"` + sha256Hex(content) + `"`
	}
	w.Header().Set("ETag", etag)
	if s.ignoreRange {
		r.Header.Del("Range")
	}
	if stall {
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.WriteHeader(http.StatusOK)
		w.Write(content[:s.stallAt])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if cut > 0 {
		w = &cutWriter{ResponseWriter: w, left: cut}
	}
	http.ServeContent(w, r, "model.gguf", time.Time{}, bytes.NewReader(content))
}

func (s *fileServer) statusLog() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.statuses...)
}

func (s *fileServer) requestLog() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// cutWriter drops the connection once left body bytes are written, like a
// network failure in the middle of a download.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) >= c.left {
		c.ResponseWriter.Write(p[:c.left])
		c.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	c.left -= len(p)
	return c.ResponseWriter.Write(p)
}

type pullEnv struct {
	store  *Store
	server *httptest.Server
	files  *fileServer
	notes  *notes
}

type notes struct {
	mu  sync.Mutex
	all []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.all = append(n.all, s); n.mu.Unlock() }
func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.all, "\n")
}

// newPullEnv serves fs, or h in front of it when h is not nil.
func newPullEnv(t *testing.T, fs *fileServer, h http.Handler) *pullEnv {
	t.Helper()
	if h == nil {
		h = fs
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &pullEnv{store: &Store{Dir: t.TempDir()}, server: srv, files: fs, notes: &notes{}}
}

func (e *pullEnv) source(t *testing.T) Source {
	t.Helper()
	src, err := ParseSource("hf.co/owner/repo/tiny.gguf", e.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (e *pullEnv) pull(ctx context.Context, t *testing.T, opts PullOptions) (Result, error) {
	t.Helper()
	opts.Backoff = time.Millisecond
	opts.Notify = e.notes.add
	return e.store.Pull(ctx, e.source(t), opts)
}

// checkInstalled asserts NAME.gguf holds want, with its sidecar and no
// partial download left.
func (e *pullEnv) checkInstalled(t *testing.T, name string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(e.store.Dir, name+".gguf"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("installed file: %d bytes, err %v; want %d bytes", len(got), err, len(want))
	}
	side, err := os.ReadFile(filepath.Join(e.store.Dir, name+".gguf.sha256"))
	if err != nil || string(side) != sha256Hex(want)+"  "+name+".gguf\n" {
		t.Fatalf("sidecar %q, %v", side, err)
	}
	e.checkNoPartial(t, name)
}

func (e *pullEnv) checkNoPartial(t *testing.T, name string) {
	t.Helper()
	left := []string{e.store.partPath(name), e.store.metaPath(name)}
	if runtime.GOOS != "windows" {
		// The lock file goes when the pull ends (Store.lock); Windows
		// cannot delete a file open for the lock.
		left = append(left, e.store.lockPath(name))
	}
	for _, p := range left {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

func TestPullFullDownload(t *testing.T) {
	content := testGGUF(t, 1)
	e := newPullEnv(t, &fileServer{content: content}, nil)
	var last, total int64
	res, err := e.pull(context.Background(), t, PullOptions{Token: "hf_secret",
		Progress: func(d, tot int64) { last, total = d, tot }})
	if err != nil {
		t.Fatal(err)
	}
	e.checkInstalled(t, "tiny", content)
	// The only pull is done: the models directory holds the model, its
	// sidecar and nothing else (no empty .partial/).
	if runtime.GOOS != "windows" {
		ents, err := os.ReadDir(e.store.Dir)
		var names []string
		for _, d := range ents {
			names = append(names, d.Name())
		}
		if err != nil || !slices.Equal(names, []string{"tiny.gguf", "tiny.gguf.sha256"}) {
			t.Errorf("models directory after the pull: %v %v", names, err)
		}
	}
	if res.Name != "tiny" || res.Size != int64(len(content)) || res.SHA256 != sha256Hex(content) || res.VerifiedBy != "ETag" || res.Resumed != 0 {
		t.Errorf("result %+v", res)
	}
	if res.Info != (Info{Arch: "llama", Quant: "Q8_0", ContextLength: 4096, Tensors: 1}) {
		t.Errorf("info %+v", res.Info)
	}
	if last != int64(len(content)) || total != int64(len(content)) {
		t.Errorf("last progress %d/%d", last, total)
	}
	reqs := e.files.requestLog()
	if len(reqs) != 1 || reqs[0].URL.Path != "/owner/repo/resolve/main/tiny.gguf" || reqs[0].Header.Get("Authorization") != "Bearer hf_secret" {
		t.Errorf("requests %v", reqs)
	}
}

func TestPullResume(t *testing.T) {
	content := testGGUF(t, 2)
	tests := []struct {
		name        string
		fs          *fileServer
		wantRanges  []string // Range header of each request
		wantNote    string
		wantResumed bool
	}{
		{name: "cut connection resumes with Range and If-Range",
			fs:         &fileServer{cutAt: []int{100_000, 50_000}},
			wantRanges: []string{"", "bytes=100000-", "bytes=150000-"}},
		{name: "server ignoring Range restarts from zero",
			fs:         &fileServer{cutAt: []int{100_000}, ignoreRange: true},
			wantRanges: []string{"", "bytes=100000-"}, wantNote: "starting over"},
		{name: "5xx is retried",
			fs:         &fileServer{status: []int{503, 502}},
			wantRanges: []string{"", "", ""}, wantNote: "retrying"},
		{name: "stalled body is retried",
			fs:         &fileServer{stallAt: 70_000},
			wantRanges: []string{"", "bytes=70000-"}, wantNote: "no data received"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fs.content = content
			e := newPullEnv(t, tc.fs, nil)
			// The short stall timeout only where the stall is under test:
			// elsewhere a pause that long in a loaded machine's transfer
			// would add a request the case does not expect.
			opts := PullOptions{StallTimeout: time.Minute}
			if tc.fs.stallAt > 0 {
				opts.StallTimeout = 200 * time.Millisecond
			}
			res, err := e.pull(context.Background(), t, opts)
			if err != nil {
				t.Fatalf("%v\nnotes:\n%s", err, e.notes)
			}
			e.checkInstalled(t, "tiny", content)
			if res.SHA256 != sha256Hex(content) || res.VerifiedBy != "ETag" {
				t.Errorf("result %+v", res)
			}
			reqs := e.files.requestLog()
			var ranges []string
			for _, r := range reqs {
				ranges = append(ranges, r.Header.Get("Range"))
				if r.Header.Get("Range") != "" && r.Header.Get("If-Range") != `"`+sha256Hex(content)+`"` {
					t.Errorf("ranged request without the ETag in If-Range: %v", r.Header)
				}
			}
			if fmt.Sprint(ranges) != fmt.Sprint(tc.wantRanges) {
				t.Errorf("ranges %q, want %q", ranges, tc.wantRanges)
			}
			if !strings.Contains(e.notes.String(), tc.wantNote) {
				t.Errorf("notes lack %q:\n%s", tc.wantNote, e.notes)
			}
		})
	}
}

// seedPartial leaves what an interrupted pull of content from src leaves.
func seedPartial(t *testing.T, s *Store, src Source, content []byte, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(s.Dir, partialDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.partPath("tiny"), content[:n], 0o644); err != nil {
		t.Fatal(err)
	}
	etag := `"` + sha256Hex(content) + `"`
	if err := s.writeMeta("tiny", partMeta{URL: src.URL, ETag: etag, Size: int64(len(content)),
		ServerSHA256: sha256Hex(content), SHA256From: "ETag"}); err != nil {
		t.Fatal(err)
	}
}

func TestPullResumesEarlierPartial(t *testing.T) {
	v1, v2 := testGGUF(t, 3), testGGUF(t, 4)
	tests := []struct {
		name        string
		partOf      []byte // the partial download's content
		partLen     int
		serve       []byte
		wantStatus  int
		wantResumed int64
	}{
		{name: "206 continues", partOf: v1, partLen: 123_456, serve: v1, wantStatus: 206, wantResumed: 123_456},
		{name: "416 means the part is complete", partOf: v1, partLen: len(v1), serve: v1, wantStatus: 416, wantResumed: int64(len(v1))},
		{name: "changed ETag restarts", partOf: v1, partLen: 123_456, serve: v2, wantStatus: 200, wantResumed: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fileServer{content: tc.serve}
			e := newPullEnv(t, fs, nil)
			seedPartial(t, e.store, e.source(t), tc.partOf, tc.partLen)
			res, err := e.pull(context.Background(), t, PullOptions{})
			if err != nil {
				t.Fatalf("%v\n%s", err, e.notes)
			}
			e.checkInstalled(t, "tiny", tc.serve)
			if res.Resumed != tc.wantResumed || res.SHA256 != sha256Hex(tc.serve) {
				t.Errorf("result %+v, want resumed %d", res, tc.wantResumed)
			}
			if statuses := fs.statusLog(); len(statuses) != 1 || statuses[0] != tc.wantStatus {
				t.Errorf("statuses %v, want [%d]", statuses, tc.wantStatus)
			}
		})
	}
}

// statusRecorder reports the status code of an answer before its body goes
// out, so the test sees it even if the client is already done.
type statusRecorder struct {
	http.ResponseWriter
	record func(int)
	done   bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.done {
		return
	}
	r.done = true
	r.record(code)
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() { r.ResponseWriter.(http.Flusher).Flush() }

func TestPullRefusals(t *testing.T) {
	content := testGGUF(t, 5)
	html := []byte("<!DOCTYPE html><html><body>Sign in to continue</body></html>")
	tests := []struct {
		name     string
		fs       *fileServer
		opts     PullOptions
		wantErr  error
		wantMsg  string
		requests int
	}{
		{name: "sha256 mismatch with --sha256", fs: &fileServer{content: content},
			opts: PullOptions{SHA256: strings.Repeat("ab", 32)}, wantErr: ErrChecksum, wantMsg: "--sha256 says abab", requests: 1},
		{name: "sha256 mismatch with the ETag", fs: &fileServer{content: content, etag: `"` + strings.Repeat("0", 64) + `"`},
			wantErr: ErrChecksum, wantMsg: "ETag says 0000", requests: 1},
		{name: "404", fs: &fileServer{status: []int{404}}, wantErr: ErrHTTP, wantMsg: "no such file in owner/repo", requests: 1},
		{name: "401", fs: &fileServer{status: []int{401}}, wantErr: ErrHTTP, wantMsg: "set HF_TOKEN", requests: 1},
		{name: "403", fs: &fileServer{status: []int{403}}, wantErr: ErrHTTP, wantMsg: "private or gated", requests: 1},
		{name: "not a GGUF", fs: &fileServer{content: html, etag: `"v1"`}, wantErr: ErrNotGGUF, wantMsg: "looks like an HTML", requests: 1},
		{name: "no space", fs: &fileServer{content: content, status: []int{-1}}, wantMsg: "free", requests: 1},
		{name: "bad --sha256", fs: &fileServer{content: content}, opts: PullOptions{SHA256: "xyz"}, wantMsg: "64 hex digits"},
		{name: "503 forever gives up", fs: &fileServer{status: []int{503, 503, 503}}, opts: PullOptions{Retries: 2},
			wantMsg: "giving up after 3 failed attempts", requests: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newPullEnv(t, tc.fs, nil)
			_, err := e.pull(context.Background(), t, tc.opts)
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err %v, want %v containing %q", err, tc.wantErr, tc.wantMsg)
			}
			if n := len(e.files.requestLog()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if _, err := os.Stat(filepath.Join(e.store.Dir, "tiny.gguf")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a model was installed: %v", err)
			}
			if errors.Is(tc.wantErr, ErrChecksum) || errors.Is(tc.wantErr, ErrNotGGUF) {
				e.checkNoPartial(t, "tiny")
			}
		})
	}
}

// TestPullRedirectDropsToken: the Hub answers 302 to a CDN on another host
// with the LFS sha256 in X-Linked-Etag; the token must not follow, not even
// to a subdomain (which Go's client alone would send it to).
func TestPullRedirectDropsToken(t *testing.T) {
	content := testGGUF(t, 6)
	cdn := &fileServer{content: content, etag: `"cdn-etag-1"`}
	cdnSrv := httptest.NewServer(cdn)
	defer cdnSrv.Close()
	hub := &fileServer{}
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hub.mu.Lock()
		hub.requests = append(hub.requests, r.Clone(context.Background()))
		hub.mu.Unlock()
		w.Header().Set("X-Linked-Etag", `"`+sha256Hex(content)+`"`)
		http.Redirect(w, r, "http://cdn.hub.test/blob/abc?sig=1", http.StatusFound)
	}))
	defer hubSrv.Close()
	// hub.test and cdn.hub.test resolve to the two test servers.
	addrs := map[string]string{"hub.test:80": hubSrv.Listener.Addr().String(), "cdn.hub.test:80": cdnSrv.Listener.Addr().String()}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addrs[addr])
	}}}
	src, err := ParseSource("hf.co/owner/repo/tiny.gguf", "http://hub.test")
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: t.TempDir()}
	res, err := store.Pull(context.Background(), src, PullOptions{Token: "hf_secret", Client: client})
	if err != nil {
		t.Fatal(err)
	}
	e := &pullEnv{store: store}
	e.checkInstalled(t, "tiny", content)
	if res.VerifiedBy != "X-Linked-Etag" {
		t.Errorf("verified by %q", res.VerifiedBy)
	}
	if h := hub.requestLog(); len(h) != 1 || h[0].Header.Get("Authorization") != "Bearer hf_secret" {
		t.Errorf("hub requests %v", h)
	}
	if c := cdn.requestLog(); len(c) != 1 || c[0].Header.Get("Authorization") != "" {
		t.Errorf("the token reached the CDN: %v", c[0].Header)
	}
}

// TestPullCancelLeavesResumablePart: cancelling mid-body keeps the part
// file; the next pull resumes from it and the result is still verified.
func TestPullCancelLeavesResumablePart(t *testing.T) {
	content := testGGUF(t, 7)
	e := newPullEnv(t, &fileServer{content: content, stallAt: 90_000}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := e.pull(ctx, t, PullOptions{Progress: func(done, _ int64) {
		if done >= 90_000 {
			cancel()
		}
	}})
	if !errors.Is(err, ErrCancelled) || !strings.Contains(err.Error(), "run the same pull again") {
		t.Fatalf("cancelled pull: %v", err)
	}
	fi, err := os.Stat(e.store.partPath("tiny"))
	if err != nil || fi.Size() != 90_000 {
		t.Fatalf("part file after cancel: %v, %v", fi, err)
	}
	_, partials, _ := e.store.List()
	if len(partials) != 1 || partials[0].Name != "tiny" || partials[0].Size != 90_000 {
		t.Errorf("partials %+v", partials)
	}
	res, err := e.pull(context.Background(), t, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.checkInstalled(t, "tiny", content)
	if res.Resumed != 90_000 || res.VerifiedBy != "ETag" {
		t.Errorf("result %+v", res)
	}
	if reqs := e.files.requestLog(); reqs[len(reqs)-1].Header.Get("Range") != "bytes=90000-" {
		t.Errorf("second pull did not resume: %v", reqs[len(reqs)-1].Header)
	}
}

package modelstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub answers the model info API for o/r with files and serves every
// file under /o/r/resolve/main/ with the same content.
func fakeHub(t *testing.T, files []string, content []byte) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		switch {
		case r.URL.Path == "/api/models/o/r":
			sib := []map[string]string{{"rfilename": "README.md"}}
			for _, f := range files {
				sib = append(sib, map[string]string{"rfilename": f})
			}
			json.NewEncoder(w).Encode(map[string]any{"id": "o/r", "siblings": sib})
		case strings.HasPrefix(r.URL.Path, "/o/r/resolve/main/"):
			w.Header().Set("ETag", `"`+sha256Hex(content)+`"`)
			http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(content))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

func TestPullByTag(t *testing.T) {
	content := testGGUF(t, 13)
	quants := []string{"Model-Q4_K_M.gguf", "Model-Q4_K_S.gguf", "Model-Q8_0.gguf", "mmproj-Model-F16.gguf"}
	tests := []struct {
		name    string
		files   []string
		source  string // after hf.co/
		want    string // the file pulled
		wantErr string
	}{
		{name: "tag", files: quants, source: "o/r:Q8_0", want: "Model-Q8_0.gguf"},
		{name: "tag in any case", files: quants, source: "o/r:q4_k_s", want: "Model-Q4_K_S.gguf"},
		{name: "no tag takes Q4_K_M", files: quants, source: "o/r", want: "Model-Q4_K_M.gguf"},
		{name: "no tag, one file", files: []string{"sub/only.Q5_K_M.gguf", "mmproj-x.gguf"}, source: "o/r", want: "sub/only.Q5_K_M.gguf"},
		{name: "Q4_K does not match Q4_K_M", files: quants, source: "o/r:Q4_K", wantErr: "no GGUF file in o/r has the tag Q4_K; it holds Model-Q4_K_M.gguf, Model-Q4_K_S.gguf, Model-Q8_0.gguf"},
		{name: "several matches", files: []string{"a-Q8_0.gguf", "b-Q8_0.gguf"}, source: "o/r:Q8_0", wantErr: "several files"},
		{name: "split file", files: []string{"m-Q8_0-00001-of-00002.gguf", "m-Q8_0-00002-of-00002.gguf"}, source: "o/r:Q8_0", wantErr: "split into 2 files"},
		{name: "no GGUF", files: nil, source: "o/r", wantErr: "holds no GGUF file"},
		{name: "unknown repo", files: quants, source: "o/missing:Q8_0", wantErr: "404 Not Found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := fakeHub(t, tc.files, content)
			src, err := ParseSource("hf.co/"+tc.source, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			store := &Store{Dir: t.TempDir()}
			res, err := store.Pull(context.Background(), src, PullOptions{Token: "hf_x"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantName := strings.TrimSuffix(tc.want[strings.LastIndex(tc.want, "/")+1:], ".gguf")
			e := &pullEnv{store: store}
			e.checkInstalled(t, wantName, content)
			if res.Name != wantName {
				t.Errorf("name %q, want %q", res.Name, wantName)
			}
			got := seen()
			if len(got) != 2 || got[0] != "/api/models/o/r Bearer hf_x" || got[1] != "/o/r/resolve/main/"+tc.want+" Bearer hf_x" {
				t.Errorf("requests %q", got)
			}
		})
	}
}

func TestHasTag(t *testing.T) {
	for _, tc := range []struct {
		name, tag string
		want      bool
	}{
		{"Llama-3.2-1B-Instruct-Q4_K_M", "Q4_K_M", true},
		{"llama-3.2-1b-instruct.q4_k_m", "Q4_K_M", true},
		{"model-Q4_K_M", "Q4_K", false},
		{"model-IQ4_XS", "Q4_XS", false},
		{"Q8_0", "Q8_0", true},
		{"model-Q8_0-Q8_0x", "Q8_0", true},
		{"model-F16", "F1", false},
	} {
		if got := hasTag(tc.name, tc.tag); got != tc.want {
			t.Errorf("hasTag(%q, %q) = %v", tc.name, tc.tag, got)
		}
	}
	if _, err := pickFile(Source{Repo: "o/r", Tag: "Q8_0"}, nil); !errors.Is(err, ErrSource) {
		t.Errorf("empty repo: %v", err)
	}
}

package modelstore

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestParseSource(t *testing.T) {
	const ep = "http://127.0.0.1:8080"
	tests := []struct {
		src, endpoint string
		url, name     string
		hf            bool
		tag           string
		wantErr       string // substring; "" means success
	}{
		{src: "hf.co/TheBloke/Llama-2-7B-GGUF/llama-2-7b.Q4_K_M.gguf",
			url: "https://huggingface.co/TheBloke/Llama-2-7B-GGUF/resolve/main/llama-2-7b.Q4_K_M.gguf", name: "llama-2-7b.Q4_K_M", hf: true},
		{src: "hf.co/owner/repo/model.gguf", endpoint: ep,
			url: ep + "/owner/repo/resolve/main/model.gguf", name: "model", hf: true},
		{src: "https://hf.co/owner/repo/sub/dir/model.gguf", endpoint: ep + "/mirror/",
			url: ep + "/mirror/owner/repo/resolve/main/sub/dir/model.gguf", name: "model", hf: true},
		{src: "hf.co/owner/repo:model-Q8_0.gguf", endpoint: ep,
			url: ep + "/owner/repo/resolve/main/model-Q8_0.gguf", name: "model-Q8_0", hf: true},
		{src: "https://huggingface.co/owner/repo/resolve/v1.2/model.gguf?download=true", endpoint: ep,
			url: ep + "/owner/repo/resolve/v1.2/model.gguf", name: "model", hf: true},
		{src: "https://huggingface.co/owner/repo/blob/main/model.gguf", endpoint: ep,
			url: ep + "/owner/repo/resolve/main/model.gguf", name: "model", hf: true},
		{src: "huggingface.co/owner/repo/my%20model.gguf", endpoint: ep,
			url: ep + "/owner/repo/resolve/main/my%20model.gguf", hf: true},
		{src: "https://example.com/files/tiny.gguf#frag", url: "https://example.com/files/tiny.gguf", name: "tiny"},
		{src: "http://127.0.0.1:9/a/b/tiny.GGUF", url: "http://127.0.0.1:9/a/b/tiny.GGUF", name: "tiny"},
		{src: "https://example.com/download?id=7", url: "https://example.com/download?id=7", name: ""},
		{src: "", wantErr: "empty source"},
		{src: "ftp://example.com/x.gguf", wantErr: "only http(s)"},
		{src: "example.com/x.gguf", wantErr: "want hf.co"},
		{src: "hf.co/owner", wantErr: "no OWNER/REPO"},
		{src: "hf.co/owner/repo", hf: true},
		{src: "hf.co/owner/repo:Q4_K_M", endpoint: ep, hf: true, tag: "Q4_K_M"},
		{src: "hf.co/owner/repo:Q4 K", wantErr: "quantisation tag"},
		{src: "hf.co/owner/repo:Q4_K_M/x", wantErr: "last part"},
		{src: "hf.co/owner/repo/resolve/main", wantErr: "no file"},
		{src: "hf.co/owner/repo/../../etc/passwd.gguf", wantErr: "relative path"},
		{src: "hf.co/ow ner/repo/x.gguf", wantErr: "OWNER and REPO"},
		{src: "https://user:pw@example.com/x.gguf", wantErr: "credentials in the URL"},
		{src: "hf.co/owner/repo/x.gguf", endpoint: "file:///tmp", wantErr: "endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			got, err := ParseSource(tc.src, tc.endpoint)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSource(%q) = %+v, %v; want an error containing %q", tc.src, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSource(%q): %v", tc.src, err)
			}
			if got.URL != tc.url || got.Name != tc.name || got.HF != tc.hf {
				t.Fatalf("ParseSource(%q) = %+v, want url %q name %q hf %v", tc.src, got, tc.url, tc.name, tc.hf)
			}
			if got.Name == "" && got.NameErr == nil && got.URL != "" {
				t.Fatal("no name and no reason")
			}
			if got.Tag != tc.tag {
				t.Fatalf("tag %q, want %q", got.Tag, tc.tag)
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{
		"stories260K": true, "llama-2-7b.Q4_K_M": true, "a": true,
		"": false, ".hidden": false, "a/b": false, "a:b": false, "x.gguf": false, "..": false,
		strings.Repeat("a", 129): false, "with space": false,
	} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// FuzzParseSource checks that any accepted source resolves to an absolute
// http(s) URL on the endpoint (for hf.co sources) with a name that is safe
// as a file name.
func FuzzParseSource(f *testing.F) {
	for _, s := range []string{
		"hf.co/owner/repo/model.gguf", "hf.co/o/r:f.gguf", "https://huggingface.co/o/r/resolve/main/a/b.gguf",
		"https://example.com/x.gguf", "http://[::1]:80/x.gguf", "hf.co/o/r/%2e%2e/x.gguf", "hf.co//r/x.gguf",
	} {
		f.Add(s)
	}
	const ep = "http://mirror.test:8080/hf"
	f.Fuzz(func(t *testing.T, src string) {
		got, err := ParseSource(src, ep)
		if err != nil {
			if !errors.Is(err, ErrSource) {
				t.Fatalf("error %v does not wrap ErrSource", err)
			}
			return
		}
		if got.URL == "" { // hf.co/OWNER/REPO[:TAG], resolved when pulling
			if !got.HF || got.Name != "" || got.endpoint == nil {
				t.Fatalf("ParseSource(%q) = %+v: no URL but not a pending Hub source", src, got)
			}
			return
		}
		u, perr := url.Parse(got.URL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("ParseSource(%q) URL %q is not an absolute http(s) URL", src, got.URL)
		}
		if got.HF && (u.Host != "mirror.test:8080" || !strings.HasPrefix(u.Path, "/hf/") || !strings.Contains(u.Path, "/resolve/")) {
			t.Fatalf("ParseSource(%q) HF URL %q is not on the endpoint", src, got.URL)
		}
		if got.HF {
			for _, seg := range strings.Split(u.Path, "/") {
				if seg == ".." || seg == "." {
					t.Fatalf("ParseSource(%q) URL %q has a relative segment", src, got.URL)
				}
			}
		}
		if got.Name != "" && ValidateName(got.Name) != nil {
			t.Fatalf("ParseSource(%q) name %q is not valid", src, got.Name)
		}
		if got.Name == "" && got.NameErr == nil {
			t.Fatalf("ParseSource(%q): no name and no reason", src)
		}
	})
}

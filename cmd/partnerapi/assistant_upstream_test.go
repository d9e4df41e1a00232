package main

import (
	"testing"

	"partnerapi/internal/assistant/upstream"
)

func TestUpstreamFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		base string
		want upstream.Served
	}{
		{"qwen=http://127.0.0.1:8080", true, "http://127.0.0.1:8080", upstream.Served{}},
		{"Embeddings=http://127.0.0.1:11434/#model=nomic-embed-text&type=embedder", true, "http://127.0.0.1:11434/", upstream.Served{Remote: "nomic-embed-text", Type: "embedder"}},
		{"GigaChat=http://h:1#model=qwen2.5:7b", true, "http://h:1", upstream.Served{Remote: "qwen2.5:7b"}},
		{"qwen", false, "", upstream.Served{}},
		{"=http://x", false, "", upstream.Served{}},
		{"qwen=notaurl", false, "", upstream.Served{}},
		{"qwen=http://x#type=image", false, "", upstream.Served{}},
		{"qwen=http://x#colour=red", false, "", upstream.Served{}},
	} {
		var f upstreamFlag
		err := f.Set(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("Set(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		for _, r := range f {
			if r.base != tc.base || r.served != tc.want {
				t.Errorf("Set(%q) = %+v, want %s %+v", tc.in, r, tc.base, tc.want)
			}
		}
	}
}

package main

import "testing"

func TestUpstreamFlag(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"qwen=http://127.0.0.1:8080", true}, {"qwen", false}, {"=http://x", false}, {"qwen=notaurl", false}} {
		var f upstreamFlag
		if err := f.Set(tc.in); (err == nil) != tc.ok {
			t.Errorf("Set(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

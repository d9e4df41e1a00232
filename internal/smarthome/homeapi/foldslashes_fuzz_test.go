package homeapi

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzFoldSlashes holds FoldSlashes to what routing needs of it: the path
// it leaves has no "//", no dot segment and no trailing slash (but "/"),
// folding it again changes nothing, a path that had none of those is left
// as it was, with its raw form, and the path it leaves names the same
// resource as path.Clean's reading of the one it was given.
func FuzzFoldSlashes(f *testing.F) {
	for _, s := range []string{"/v1/mqtt-gate/agents", "//v1/mqtt-gate/agents", "/v1//devices/", "/v1/./a/../b", "/", "",
		"/..", "/.well-known/x", "/a/", "///", "/a/b/.", "/a%2Fb//c", "/a/..b/.c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if p != "" && p[0] != '/' {
			// The server routes origin-form targets, which open with "/".
			return
		}
		u, err := url.Parse(p)
		if err != nil || u.Path != p && u.RawPath == "" {
			// Test the decoded path as the server sees it.
			u = &url.URL{Path: p}
		}
		orig, origRaw := u.Path, u.RawPath
		r := &http.Request{URL: u}
		FoldSlashes(r)
		got := r.URL.Path
		clean := !strings.Contains(orig, "//") && !hasDotSegment(orig) && (len(orig) <= 1 || !strings.HasSuffix(orig, "/"))
		if clean && (got != orig || r.URL.RawPath != origRaw) {
			t.Fatalf("%q (raw %q) became %q (raw %q)", orig, origRaw, got, r.URL.RawPath)
		}
		if got == orig {
			if !clean {
				t.Fatalf("%q left as it was", orig)
			}
			return
		}
		if strings.Contains(got, "//") || hasDotSegment(got) || len(got) > 1 && strings.HasSuffix(got, "/") {
			t.Fatalf("%q became %q", orig, got)
		}
		if got != path.Clean(orig) {
			t.Fatalf("%q became %q, path.Clean says %q", orig, got, path.Clean(orig))
		}
		FoldSlashes(r)
		if r.URL.Path != got {
			t.Fatalf("%q became %q, then %q", orig, got, r.URL.Path)
		}
	})
}

func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

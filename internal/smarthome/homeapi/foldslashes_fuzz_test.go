package homeapi

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzFoldSlashes holds FoldSlashes to what routing needs of it, on the
// path as sent (EscapedPath, which ServeMux cleans and routes) with its
// encoded dots read as dots (RFC 3986 §2.3): the path it leaves has no
// "//", no dot segment and no trailing slash (but "/"), and is path.Clean
// of the one it was given, so an encoded slash stays a character of its
// segment; Path is that path decoded; folding again changes nothing; a
// path that had none of those is left as it was, with its raw form; and
// without an encoded slash the Path it leaves is path.Clean's reading of
// the Path it was given.
func FuzzFoldSlashes(f *testing.F) {
	for _, s := range []string{"/v1/mqtt-gate/agents", "//v1/mqtt-gate/agents", "/v1//devices/", "/v1/./a/../b", "/", "",
		"/..", "/.well-known/x", "/a/", "///", "/a/b/.", "/a%2Fb//c", "/a/..b/.c/", "/a%2F/b", "/a/%2E%2E/b%2fc/", "/a%41//b"} {
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
		orig, origRaw, sent := u.Path, u.RawPath, u.EscapedPath()
		dots := strings.NewReplacer("%2E", ".", "%2e", ".")
		model := dots.Replace(sent)
		r := &http.Request{URL: u}
		FoldSlashes(r)
		got := r.URL.EscapedPath()
		clean := !strings.Contains(model, "//") && !hasDotSegment(model) && (len(model) <= 1 || !strings.HasSuffix(model, "/"))
		if clean {
			if r.URL.Path != orig || r.URL.RawPath != origRaw {
				t.Fatalf("%q (raw %q) became %q (raw %q)", orig, origRaw, r.URL.Path, r.URL.RawPath)
			}
			return
		}
		if g := dots.Replace(got); strings.Contains(g, "//") || hasDotSegment(g) || len(g) > 1 && strings.HasSuffix(g, "/") {
			t.Fatalf("%q became %q", sent, got)
		}
		if got != path.Clean(model) {
			t.Fatalf("%q became %q, path.Clean says %q", sent, got, path.Clean(model))
		}
		if dec, err := url.PathUnescape(got); err != nil || dec != r.URL.Path {
			t.Fatalf("%q became %q with Path %q, which is not it decoded (%q, %v)", sent, got, r.URL.Path, dec, err)
		}
		if !strings.Contains(strings.ToUpper(sent), "%2F") && r.URL.Path != path.Clean(orig) {
			t.Fatalf("%q became Path %q, path.Clean says %q", orig, r.URL.Path, path.Clean(orig))
		}
		path1, raw1 := r.URL.Path, r.URL.RawPath
		FoldSlashes(r)
		if r.URL.Path != path1 || r.URL.RawPath != raw1 {
			t.Fatalf("%q became %q, then %q", sent, got, r.URL.EscapedPath())
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

package web

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// FoldPath makes the path clean before routing, for an API.Prepare: real
// clients build URLs by string concatenation, so a base URL configured with
// a trailing slash sends //v1/mqtt-gate/... or /api/v1//chat/completions,
// and the platform's ServeMux would answer that, or a dot segment (/./,
// /..), with a redirect page in HTML that they neither follow nor can read
// as JSON (smart home reference §8.1, §8.2; assistant reference §2, §4:
// every answer JSON, every error the API's envelope). Repeated slashes are
// collapsed, dot segments resolved as path.Clean does and a trailing slash
// is dropped, as an nginx in front of the provider's services does with
// its default merge_slashes.
//
// The folding works on the path as sent (EscapedPath), which is also what
// ServeMux cleans and routes: an encoded slash (%2F) is a character inside
// its segment, and folding the decoded Path would have made /a%2Fb//c the
// three segments /a/b/c. Encoded dots are decoded first, since "." is
// unreserved and %2E is the same character (RFC 3986 §2.3), so %2E%2E is
// a dot segment as ".." is. Path and RawPath are then derived from the
// folded form together, as url.URL keeps them.
func FoldPath(r *http.Request) {
	if r.URL.RawPath == "" {
		// Path escapes to the path as sent, with the same slashes and
		// dots, so it can be folded as it is.
		p := r.URL.Path
		if !unclean(p) {
			return
		}
		if c := path.Clean(p); c != p {
			r.URL.Path = c
		}
		return
	}
	sent := r.URL.EscapedPath()
	p := decodeDots(sent)
	if !unclean(p) {
		return
	}
	c := path.Clean(p)
	if c == p {
		return
	}
	decoded, err := url.PathUnescape(c)
	if err != nil {
		return // cannot happen: c is made of a valid escaped path's pieces
	}
	r.URL.Path, r.URL.RawPath = decoded, c
	if (&url.URL{Path: decoded}).EscapedPath() == c {
		r.URL.RawPath = "" // the default escaping: url.URL leaves RawPath empty then
	}
}

// unclean reports whether p has what FoldPath folds: "//", a dot
// segment or a trailing slash ("/." is a cheap superset of dot segments).
func unclean(p string) bool {
	return strings.Contains(p, "//") || strings.Contains(p, "/.") || len(p) > 1 && strings.HasSuffix(p, "/")
}

// decodeDots replaces %2E and %2e in an escaped path with ".".
func decodeDots(p string) string {
	if !strings.Contains(p, "%2") {
		return p
	}
	return strings.NewReplacer("%2E", ".", "%2e", ".").Replace(p)
}

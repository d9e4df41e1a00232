package web

import (
	"net/http"
	"strings"
)

// fastRoutes matches the common request — a clean path, a method with
// routes, no ambiguity — against the registered patterns without
// http.ServeMux's general machinery (path cleaning, redirects, precedence
// rules), which profiles showed to be the largest single cost of the
// platform per request. Anything it is not sure about goes to the ServeMux,
// so answers never differ; a test compares the two on many requests.
type fastRoutes struct {
	disabled bool
	byMethod map[string][]fastRoute
}

type fastRoute struct {
	pattern string   // as registered, "GET /a/{b}"; becomes r.Pattern
	segs    []string // literal segments; "" for a wildcard
	names   []string // wildcard names by segment; "" for a literal
	h       http.Handler
}

// add registers a pattern; patterns the fast path does not handle (host
// names, trailing slashes, {x...}, {$}) turn it off for the whole mux, since
// their precedence over simple patterns is the ServeMux's to decide.
func (f *fastRoutes) add(method, pattern string, h http.Handler) {
	if f.byMethod == nil {
		f.byMethod = map[string][]fastRoute{}
	}
	if !strings.HasPrefix(pattern, "/") || strings.HasSuffix(pattern, "/") || strings.Contains(pattern, "...}") ||
		strings.Contains(pattern, "{$}") || strings.Contains(pattern, "//") {
		f.disabled = true
		return
	}
	rt := fastRoute{pattern: method + " " + pattern, h: h}
	for seg := range strings.SplitSeq(pattern[1:], "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			rt.segs, rt.names = append(rt.segs, ""), append(rt.names, seg[1:len(seg)-1])
			continue
		}
		if strings.ContainsAny(seg, "{}%") {
			f.disabled = true // partial wildcards and escapes are not simple
			return
		}
		rt.segs, rt.names = append(rt.segs, seg), append(rt.names, "")
	}
	f.byMethod[method] = append(f.byMethod[method], rt)
}

// match returns the one route that matches r, or nil when the ServeMux must
// decide (no match, several matches, unclean or escaped paths, HEAD).
func (f *fastRoutes) match(r *http.Request) *fastRoute {
	if f.disabled {
		return nil
	}
	routes := f.byMethod[r.Method]
	p := r.URL.Path
	if len(routes) == 0 || r.URL.RawPath != "" || len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' ||
		strings.Contains(p, "//") || strings.Contains(p, "/.") {
		return nil
	}
	// A route matches only a path of as many segments as it has, so the
	// count, taken once, passes over most routes without cutting the path
	// segment by segment against each of them.
	n := strings.Count(p, "/")
	var found *fastRoute
	for i := range routes {
		if len(routes[i].segs) == n && routes[i].matches(p[1:]) {
			if found != nil {
				return nil
			}
			found = &routes[i]
		}
	}
	return found
}

// matches compares the segments of a path (without its leading slash).
func (rt *fastRoute) matches(p string) bool {
	for i, lit := range rt.segs {
		seg, rest, more := strings.Cut(p, "/")
		if seg == "" || (lit != "" && seg != lit) || more != (i < len(rt.segs)-1) {
			return false
		}
		p = rest
	}
	return true
}

// serve sets what the ServeMux would have set and runs the handler. The
// path has no escapes the ServeMux would treat differently (match refuses
// a RawPath), so its segments are the wildcard values.
func (rt *fastRoute) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path[1:]
	for _, name := range rt.names {
		seg, rest, _ := strings.Cut(p, "/")
		p = rest
		if name != "" {
			r.SetPathValue(name, seg)
		}
	}
	r.Pattern = rt.pattern
	rt.h.ServeHTTP(w, r)
}

package web

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzDeclaresJSON holds the JSON body check of both APIs to RFC 9110
// §8.3.1 and RFC 6839: a body is read as JSON when the header is absent or
// its media type, compared without letter case and without its
// parameters, is application/json or has the +json suffix. On any header,
// a request let through has such a type; JSON and other types generated
// in mixed case, with parameters and optional white space, get the verdict
// their type says.
//
// The fuzzed header is at most 64 bytes: a media type's parameters are
// read in a loop, so every longer header was new coverage that the
// minimizer shortened substring by substring while the only worker fuzzed
// nothing (at 256 bytes, 15 s of a 45 s run, which then ended in the
// minimizer with "context deadline exceeded").
func FuzzDeclaresJSON(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), "application/json; charset=utf-8")
	f.Add(uint8(1), uint8(0xff), uint8(1), "text/plain")
	f.Add(uint8(5), uint8(0x0f), uint8(3), "application/jsonp")
	f.Add(uint8(2), uint8(0), uint8(2), "application/json;charset=")
	f.Add(uint8(3), uint8(0), uint8(2), "APPLICATION/JSON ; charset=\"utf-8\"")
	types := []struct {
		mt   string
		json bool
	}{{"application/json", true}, {"application/vnd.api+json", true}, {"application/merge-patch+json", true},
		{"application/problem+json", true}, {"text/plain", false}, {"multipart/form-data; boundary=x", false},
		{"application/x-www-form-urlencoded", false}, {"application/jsonp", false}, {"application/json-seq", false},
		{"application/x-ndjson", false}, {"application/jose", false}, {"text/json5", false}}
	f.Fuzz(func(t *testing.T, which, caseBits, params uint8, raw string) {
		if len(raw) > 64 {
			return
		}
		check := func(ct string) bool {
			h := http.Header{}
			if ct != "" {
				h["Content-Type"] = []string{ct}
			}
			return DeclaresJSON(h)
		}
		if check(raw) && raw != "" {
			mt := strings.ToLower(strings.Trim(strings.SplitN(raw, ";", 2)[0], " \t"))
			if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
				t.Fatalf("Content-Type %q (%q) is read as JSON", raw, mt)
			}
		}
		ty := types[int(which)%len(types)]
		b := []byte(ty.mt)
		for i := range b {
			if caseBits&(1<<(i%8)) != 0 && 'a' <= b[i] && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
		ct := string(b)
		switch params % 4 {
		case 1:
			ct += "; charset=utf-8"
		case 2:
			ct += ";charset=UTF-8"
		case 3:
			ct += " ; charset=\"utf-8\"; q=1"
		}
		if got := check(ct); got != ty.json {
			t.Fatalf("Content-Type %q read as JSON: %v, want %v", ct, got, ty.json)
		}
	})
}

package bankapi

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

var (
	// acceptElement is one media range of RFC 9110 §12.5.1 with its
	// parameters (tokens, or quoted strings without escapes).
	acceptElement = regexp.MustCompile(`^[ \t]*([!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+/[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+)((?:[ \t]*;[ \t]*[!#$%&'+.^_` + "`" + `|~0-9A-Za-z-]+=(?:[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+|"[^"\\]*"))*)[ \t]*$`)
	acceptParam   = regexp.MustCompile(`;[ \t]*([^=; \t]+)=("[^"]*"|[^; \t]+)`)
	// qvalue is the weight's grammar (RFC 9110 §12.4.2).
	qvalue = regexp.MustCompile(`^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$`)
)

// FuzzQRAccept holds the answer format of GET …/requisites-qr to RFC 9110
// §12.4.2 and §12.5.1: a well-formed Accept header asks for the image when
// it gives image/png a weight above 0 and application/json none (absent or
// q=0, in any of its spellings: 0, 0., 0.0, 0.00, 0.000).
func FuzzQRAccept(f *testing.F) {
	for _, s := range []string{
		"image/png", "image/png, application/json", "image/png, application/json;q=0",
		"IMAGE/PNG;Q=0.5", "image/png;q=1.000;charset=x", "*/*", "image/*, application/json;q=0.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		png, json := false, false
		for _, el := range strings.Split(accept, ",") {
			m := acceptElement.FindStringSubmatch(el)
			if m == nil {
				return // not a well-formed header: the reference does not say
			}
			q, seen := "1", map[string]bool{}
			for _, p := range acceptParam.FindAllStringSubmatch(m[2], -1) {
				name := strings.ToLower(p[1])
				if seen[name] {
					return // a parameter named twice
				}
				seen[name] = true
				if name == "q" {
					if q = p[2]; !qvalue.MatchString(q) {
						return
					}
				}
			}
			acceptable := strings.Trim(q, "0.") != ""
			png = png || (acceptable && strings.EqualFold(m[1], "image/png"))
			json = json || (acceptable && strings.EqualFold(m[1], "application/json"))
		}
		r := httptest.NewRequest("GET", "/fintech/api/v1/payments/x/requisites-qr", nil)
		r.Header.Set("Accept", accept)
		got, err := wantsPNG(r)
		if err != nil || got != (png && !json) {
			t.Fatalf("Accept %q: wantsPNG = %v, %v; want %v", accept, got, err, png && !json)
		}
	})
}

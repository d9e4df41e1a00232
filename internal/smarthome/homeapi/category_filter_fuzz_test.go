package homeapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// FuzzCategoryFilter holds the models listing's ?category= reader to its
// two spellings: names given as the parameter repeated and as one
// comma-separated value, percent-encoded as url.Values encodes them, come
// back as the same names in the same order; a name left empty is refused
// in either spelling; and on any query, names read are never empty and
// never hold the comma that separates them.
func FuzzCategoryFilter(f *testing.F) {
	f.Add("light,socket", "category=light&category=socket")
	f.Add("a b,ц%,+", "category=light,,socket")
	f.Add(",", "category=&x=1")
	f.Add("light", "category=%zz&category=light")
	f.Fuzz(func(t *testing.T, list, rawQuery string) {
		if len(list) > 128 || len(rawQuery) > 128 {
			return
		}
		read := func(q string) ([]string, bool, error) {
			return categoryFilter(&http.Request{URL: &url.URL{Path: "/v1/mqtt-gate/models", RawQuery: q}})
		}
		if names, _, err := read(rawQuery); err == nil {
			for _, n := range names {
				if n == "" || strings.Contains(n, ",") {
					t.Fatalf("query %q read as names %q", rawQuery, names)
				}
			}
		}
		names := strings.Split(list, ",")
		repeated := url.Values{"category": names}.Encode()
		joined := url.Values{"category": {list}}.Encode()
		for _, q := range []string{repeated, joined} {
			got, filtered, err := read(q)
			if slices.Contains(names, "") {
				if err == nil {
					t.Fatalf("query %q with an empty name read as %q", q, got)
				}
				continue
			}
			if err != nil || !filtered || !slices.Equal(got, names) {
				t.Fatalf("query %q read as %q (filtered %v, %v), want %q", q, got, filtered, err, names)
			}
		}
	})
}

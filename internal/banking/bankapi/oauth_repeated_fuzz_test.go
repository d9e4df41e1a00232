package bankapi

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzOAuthRepeatedParam holds the OAuth endpoints' reading of a form
// (url.ParseQuery, then repeatedParam) to the
// application/x-www-form-urlencoded grammar read by hand: pairs split at
// "&", a name ending at the first "=", names compared after percent- and
// plus-decoding. A form the reader takes is refused exactly when some
// decoded name occurs twice, the refusal names such a name, and a form it
// takes unrefused gives every name its one value.
func FuzzOAuthRepeatedParam(f *testing.F) {
	for _, s := range []string{
		"grant_type=refresh_token&client_id=a&client_secret=b&refresh_token=c",
		"client_id=a&client_id=b", "a=1&%61=2", "a+b=1&a%20b=2", "a&a=", "a=&a", "&&a=1&&", "=1&=2", "a=1;a=2",
		"a=%zz&a=1", "token=x", "", "a==&a=%3D", "scope=openid+GET_CLIENT_ACCOUNTS&state=%26",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, form string) {
		v, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		count, value := map[string]int{}, map[string]string{}
		for _, pair := range strings.Split(form, "&") {
			if pair == "" {
				continue
			}
			k, val, _ := strings.Cut(pair, "=")
			dk, err1 := url.QueryUnescape(k)
			dv, err2 := url.QueryUnescape(val)
			if err1 != nil || err2 != nil {
				t.Fatalf("ParseQuery(%q) took %q, which does not decode", form, pair)
			}
			count[dk]++
			value[dk] = dv
		}
		name, repeated := repeatedParam(v)
		want := false
		for _, n := range count {
			want = want || n > 1
		}
		switch {
		case repeated != want:
			t.Fatalf("repeatedParam(%q) = %q, %v; counts %v", form, name, repeated, count)
		case repeated && count[name] < 2:
			t.Fatalf("repeatedParam(%q) names %q, which occurs %d times", form, name, count[name])
		case !repeated:
			for k, n := range count {
				if n != 1 || len(v[k]) != 1 || v.Get(k) != value[k] {
					t.Fatalf("form %q: %q = %q, want %q", form, k, v[k], value[k])
				}
			}
			if len(v) != len(count) {
				t.Fatalf("form %q: %d names, want %d", form, len(v), len(count))
			}
		}
	})
}

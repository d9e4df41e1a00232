package bankapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// DefaultPrefix is the provider's API path prefix (reference §1): the
// base URLs of every contour end in it, and the routes are written under
// it.
const DefaultPrefix = apiPrefix

// CheckPrefix checks a configured API prefix: a path of its own, starting
// with a slash, without a trailing one, query or dot segments. Empty is the
// default (a module built without its flags parsed).
func CheckPrefix(p string) error {
	if p == DefaultPrefix || p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#% \t") ||
		strings.Contains(p, "//") || strings.Contains(p, "/.") || strings.HasPrefix(p, "/ic/") {
		return fmt.Errorf("--banking-prefix must be a path such as /fintech/api or /bank/fintech/api (a leading slash, no trailing one, outside /ic/), got %q", p)
	}
	return nil
}

// Prefixed serves the API under prefix as well as under DefaultPrefix: a
// deployment behind a path of its own (reference §1: "serve under a
// configurable prefix") is reached there, while the routes stay written
// once under the provider's prefix. It returns the Prepare hook of the
// listener, which maps a path under prefix onto the provider's before
// routing (nil for the default, which costs nothing), and the contract
// with its paths under prefix, as a client of this deployment calls them.
// The OAuth paths (/ic/sso/...) are not under the prefix, at the provider
// either, and stay where they are.
func Prefixed(prefix string, spec []byte) (prepare func(*http.Request), served []byte) {
	if prefix == DefaultPrefix || prefix == "" {
		return nil, spec
	}
	from := prefix + "/"
	prepare = func(r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, from)
		if !ok {
			return
		}
		r.URL.Path = DefaultPrefix + "/" + rest
		if raw, ok := strings.CutPrefix(r.URL.RawPath, from); ok {
			// An escaped path keeps its escapes (an externalId with %2F
			// stays one segment).
			r.URL.RawPath = DefaultPrefix + "/" + raw
		} else {
			r.URL.RawPath = ""
		}
	}
	return prepare, bytes.ReplaceAll(spec, []byte(DefaultPrefix+"/"), []byte(from))
}

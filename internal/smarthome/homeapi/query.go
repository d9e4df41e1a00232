package homeapi

import (
	"net/http"
	"net/url"
	"strings"

	"partnerapi/internal/smarthome"
)

// queryValues is every value of the query parameter name, in order, and
// whether the parameter is there at all. It reads the query as
// url.ParseQuery does (pairs separated by "&", "+" a space, keys and
// values percent-decoded) but does not drop a pair it cannot read, as
// r.URL.Query() does silently: ?category=%ZZ or ?category=light;socket
// would then come to a request without the parameter, so that the models
// listing answered every model and validation checked a status against
// the whole catalog and called it valid, instead of the category the
// client asked for. A value of the parameter that is not percent-encoded
// properly is the client's mistake, 400; a semicolon is no separator here
// (as in net/url since Go 1.17), so it stays in the value, whose name the
// caller then does not know. Pairs of other parameters are ignored
// whatever they hold (reference §8.7).
func queryValues(r *http.Request, name string) (values []string, present bool, err error) {
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if key, err := url.QueryUnescape(k); err != nil || key != name {
			continue
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, true, &smarthome.InvalidError{Details: []string{
				name + " is not percent-encoded properly: " + err.Error()}}
		}
		values = append(values, value)
		present = true
	}
	return values, present, nil
}

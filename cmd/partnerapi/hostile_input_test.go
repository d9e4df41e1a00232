package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// The hostile-input sweep walks every operation of the three embedded
// contracts, taken from the contracts themselves so that a route added to
// api/*.yaml is swept without anyone touching this file, and sends each the
// requests a careless or hostile client sends: no credentials, malformed and
// expired ones, valid ones without the operation's scope, broken bodies,
// other tenants' ids, wrong methods and mistyped query parameters. Each
// answer must be a 4xx the contract documents for the operation, in that
// API's own error envelope, never a 5xx, never another tenant's data; a
// write refused must have written nothing. The per-API files
// (hostile_banking_test.go, hostile_assistant_test.go,
// hostile_smarthome_test.go) say how to make a good request of each
// operation; this file holds the walk and the checks common to all three.

// hostileOp is one operation of a contract as the sweep sees it.
type hostileOp struct {
	method, path string // the contract's method and path template
	codes        map[int]bool
	secured      bool     // the operation requires credentials
	jsonBody     bool     // it takes a JSON body
	formBody     bool     // it takes a form body (the OAuth endpoints)
	pathParams   []string // names of its path parameters
	typedQuery   []typedParam
	allowed      []string // methods the path serves, upper case
}

func (op hostileOp) key() string { return op.method + " " + op.path }

// typedParam is a query parameter whose schema lets some strings be of the
// wrong type: an integer or an enumeration.
type typedParam struct{ name, wrong string }

// contractOps lists the operations of c in the contract's order.
func contractOps(c *contractSpec) []hostileOp {
	var ops []hostileOp
	doc := c.model.Model
	for path, item := range doc.Paths.PathItems.FromOldest() {
		var allowed []string
		for method := range item.GetOperations().KeysFromOldest() {
			// A HEAD operation is its GET's answer without the body (the
			// server serves it for every GET route), so the sweep, whose
			// checks read the error body, sends it the GET's requests only,
			// and the 405's Allow names the methods routed, as the
			// reference's "Allow: GET" does.
			if strings.EqualFold(method, http.MethodHead) {
				continue
			}
			allowed = append(allowed, strings.ToUpper(method))
		}
		sort.Strings(allowed)
		for method, op := range item.GetOperations().FromOldest() {
			if strings.EqualFold(method, http.MethodHead) {
				continue
			}
			h := hostileOp{method: strings.ToUpper(method), path: path, codes: map[int]bool{}, allowed: allowed}
			for code := range op.Responses.Codes.KeysFromOldest() {
				// "default" documents no status of its own: the sweep
				// wants each refusal named.
				if n, err := strconv.Atoi(code); err == nil {
					h.codes[n] = true
				}
			}
			// An operation's own security list replaces the document's; an
			// empty one (security: []) means the operation is public, and
			// so does a list with an empty requirement ({}) among its
			// alternatives: the OAuth endpoints take the client's Basic
			// credentials or its form credentials, which OpenAPI cannot
			// name as a scheme, so a request without an Authorization
			// header is not refused for that.
			sec := doc.Security
			if op.Security != nil {
				sec = op.Security
			}
			h.secured = len(sec) > 0 && !slices.ContainsFunc(sec, func(r *base.SecurityRequirement) bool { return r.ContainsEmptyRequirement })
			if op.RequestBody != nil && op.RequestBody.Content != nil {
				h.jsonBody = op.RequestBody.Content.GetOrZero("application/json") != nil
				h.formBody = op.RequestBody.Content.GetOrZero("application/x-www-form-urlencoded") != nil
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				switch {
				case p.In == "path":
					h.pathParams = append(h.pathParams, p.Name)
				case p.In == "header" && strings.EqualFold(p.Name, "Authorization"):
					// The assistant's token endpoint takes Basic
					// credentials as a declared header, not as a
					// security scheme.
					h.secured = true
				case p.In == "query" && p.Schema != nil:
					if wrong := wrongValue(p); wrong != "" {
						h.typedQuery = append(h.typedQuery, typedParam{p.Name, wrong})
					}
				}
			}
			ops = append(ops, h)
		}
	}
	return ops
}

// wrongValue is a value of the wrong type for a typed query parameter, ""
// for a free string, which no value can be wrong for.
func wrongValue(p *v3.Parameter) string {
	s := p.Schema.Schema()
	if s == nil {
		return ""
	}
	if slices.Contains(s.Type, "array") && s.Items != nil && s.Items.IsA() {
		s = s.Items.A.Schema()
	}
	switch {
	case slices.Contains(s.Type, "integer"), slices.Contains(s.Type, "number"):
		return "twelve"
	case len(s.Enum) > 0:
		return "NO_SUCH_VALUE"
	}
	return ""
}

// hostileReq is a request of one operation. A target's good request is one
// the operation answers with success (or, where baseline says so, the
// status an unmodified request gets); each class of the sweep spoils one
// part of it.
type hostileReq struct {
	path   string // concrete path, query included
	auth   string // the Authorization header; "" sends none
	ctype  string // the body's Content-Type
	body   string
	header map[string]string
	// baseline is the status the unmodified request gets: 0 means a 2xx.
	// The OAuth endpoints' good requests spend a code or a secret, so
	// theirs are well formed but refused, which still tells a spoiled body
	// from a sound one.
	baseline int
	// written reports whether the request's write happened, nil when it
	// writes nothing the sweep can observe.
	written func(t *testing.T) bool
	// leaks are strings only another tenant's data holds: no answer to the
	// sweep's credentials may contain them.
	leaks []string
	// anyID says the path id names the resource the request creates, and
	// the API gives ids no syntax: no id is invalid there.
	anyID bool
	// tolerated names the body classes the operation takes by design (an
	// optional body may be empty; a function checker reports on any
	// object), which the sweep does not send it.
	tolerated []string
}

// hostileTarget is one API under the sweep: a live server, its contract and
// what the per-API file knows about its operations.
type hostileTarget struct {
	name     string
	base     string
	contract *contractSpec
	// good returns a fresh good request of op; ok false leaves the
	// operation out of the classes that need one (a missing fixture fails
	// the sweep, see run).
	good func(t *testing.T, op hostileOp) (hostileReq, bool)
	// badCreds are malformed and expired Authorization values for op, by
	// name.
	badCreds func(op hostileOp) map[string]string
	// unscoped is a valid credential without op's scope (or role) and the
	// status the API documents for it; "" when every credential the API
	// issues may call the operation.
	unscoped func(op hostileOp) (string, int)
	// foreign is op's good request with its path ids those of another
	// tenant, ok false when op has none such.
	foreign func(t *testing.T, op hostileOp) (hostileReq, bool)
	// badIDs are syntactically invalid values for a path parameter.
	badIDs []string
	// envelope decodes an error answer strictly in the API's envelope for
	// the path and fails t when it is not one.
	envelope func(t *testing.T, path string, status int, raw []byte)
	// maxBody is the body size the API refuses above.
	maxBody int
	// lenient drops validator findings the contract test ignores too.
	lenient func(errs []*verrors.ValidationError) bool
}

// sweep runs every class of hostile input against every operation of tg.
func (tg *hostileTarget) sweep(t *testing.T) {
	ops := contractOps(tg.contract)
	if len(ops) == 0 {
		t.Fatal("the contract has no operations")
	}
	counts := map[string]int{}
	for _, op := range ops {
		t.Run(op.key(), func(t *testing.T) {
			for class, n := range tg.sweepOp(t, op) {
				counts[class] += n
			}
		})
	}
	t.Logf("%s: %d operations; requests by class: %v", tg.name, len(ops), counts)
}

// sweepOp sends op every class that applies to it and returns how many
// requests of each class it sent.
func (tg *hostileTarget) sweepOp(t *testing.T, op hostileOp) map[string]int {
	sent := map[string]int{}
	isPlatform := op.path == "/healthz" || op.path == "/metrics" || op.path == "/openapi.yaml"
	g, ok := tg.good(t, op)
	if !ok {
		if !isPlatform {
			t.Errorf("no good request for %s: add one to the %s sweep", op.key(), tg.name)
		}
	} else {
		// The good request must succeed, or the refusals below prove
		// nothing and their "nothing written" checks are vacuous.
		status, raw := tg.send(t, op.method, g)
		switch {
		case g.baseline == 0 && (status < 200 || status > 299):
			t.Fatalf("the good request answered %d: %.300s", status, raw)
		case g.baseline != 0 && status != g.baseline:
			t.Fatalf("the baseline request answered %d, want %d: %.300s", status, g.baseline, raw)
		case g.written != nil && !g.written(t):
			t.Fatal("the good request's write is not visible: the sweep's write check is vacuous")
		}
	}
	check := func(class string, req hostileReq, method string, want ...int) {
		t.Helper()
		sent[class]++
		t.Run(class, func(t *testing.T) {
			tg.refused(t, op, method, req, want)
		})
	}
	fresh := func() hostileReq {
		r, _ := tg.good(t, op)
		if r.path == "" {
			r.path = op.path
		}
		return r
	}
	if op.secured {
		r := fresh()
		r.auth = ""
		check("no credentials", r, op.method, http.StatusUnauthorized)
		bad := tg.badCreds(op)
		for _, name := range sortedKeys(bad) {
			r := fresh()
			r.auth = bad[name]
			check("credentials "+name, r, op.method, http.StatusUnauthorized)
		}
		if cred, status := tg.unscoped(op); cred != "" {
			r := fresh()
			r.auth = cred
			check("without the scope", r, op.method, status)
		}
	}
	if ok && (op.jsonBody || op.formBody) {
		tg.sweepBody(op, fresh, check)
	}
	if ok && len(op.pathParams) > 0 {
		if r, found := tg.foreign(t, op); found {
			check("another tenant's id", r, op.method, http.StatusNotFound, http.StatusBadRequest)
		}
		for i, bad := range tg.badIDs {
			r := fresh()
			if r.anyID {
				break
			}
			r.path = withPathParams(op, r.path, bad)
			check("invalid id "+strconv.Itoa(i), r, op.method, http.StatusNotFound, http.StatusBadRequest)
		}
	}
	// A wrong method has no operation in the contract to document its
	// answer: every API answers RFC 9110's 405 naming the path's methods
	// (the smart home reference, §3, says so of its own). Each path is
	// tried once, from the operation whose method sorts first.
	for _, m := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
		if !slices.Contains(op.allowed, m) && op.method == op.allowed[0] {
			check("method "+m, fresh(), m, http.StatusMethodNotAllowed)
		}
	}
	if ok {
		for _, p := range op.typedQuery {
			r := fresh()
			r.path = withQuery(r.path, p.name, p.wrong)
			want := []int{http.StatusBadRequest}
			if op.codes[http.StatusFound] {
				// An OAuth authorization endpoint sends a refusal back
				// to the client's registered redirect_uri once it knows
				// that one (RFC 6749 §4.1.2.1): a 302 whose Location
				// carries the error (refused checks it).
				want = append(want, http.StatusFound)
			}
			check("query "+p.name+" of the wrong type", r, op.method, want...)
		}
	}
	return sent
}

// sweepBody sends op the broken bodies: not JSON, JSON of the wrong types,
// none at all, one over the size limit and one under a Content-Type the
// operation does not take.
func (tg *hostileTarget) sweepBody(op hostileOp, fresh func() hostileReq, check func(string, hostileReq, string, ...int)) {
	bodies := map[string]string{}
	if op.jsonBody {
		bodies["not JSON"] = `{"a":`
		bodies["JSON array"] = `[1,2]`
		bodies["JSON string"] = `"text"`
		bodies["wrong member types"] = retyped(fresh().body)
		bodies["empty body"] = ""
	}
	for _, name := range sortedKeys(bodies) {
		r := fresh()
		if bodies[name] == r.body || slices.Contains(r.tolerated, name) {
			continue // a body with nothing to retype, or one the operation takes
		}
		r.body = bodies[name]
		check(name, r, op.method, http.StatusBadRequest)
	}
	r := fresh()
	r.body = padTo(r.body, tg.maxBody+1)
	check("body over the limit", r, op.method, http.StatusRequestEntityTooLarge)
	r = fresh()
	if op.formBody {
		// A form endpoint reads no field of a JSON body; RFC 6749 §5.2
		// makes the missing client credentials its first fault (401).
		r.ctype = "application/json"
		check("wrong Content-Type", r, op.method, http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnsupportedMediaType)
		return
	}
	r.ctype = "text/plain"
	check("wrong Content-Type", r, op.method, http.StatusBadRequest, http.StatusUnsupportedMediaType)
}

// refused sends req and holds the answer to the sweep's rules.
func (tg *hostileTarget) refused(t *testing.T, op hostileOp, method string, req hostileReq, want []int) {
	resp, raw := tg.do(t, method, req)
	status := resp.StatusCode
	if status >= 500 {
		t.Fatalf("%d: a hostile request is a server error: %.300s", status, raw)
	}
	if !slices.Contains(want, status) {
		t.Errorf("status %d, want one of %v: %.300s", status, want, raw)
	}
	if method == op.method && !op.codes[status] {
		t.Errorf("status %d is not documented for %s (documented: %v)", status, op.key(), sortedCodes(op.codes))
	}
	if method != op.method && status == http.StatusMethodNotAllowed {
		// RFC 9110 §15.5.6: a 405 names the methods the path serves,
		// which are the contract's.
		if got := resp.Header.Get("Allow"); got != strings.Join(op.allowed, ", ") {
			t.Errorf("Allow %q, want %q", got, strings.Join(op.allowed, ", "))
		}
	}
	if status == http.StatusFound {
		// A refusal redirected to the client is no body of an envelope:
		// its error is in the Location's query.
		if loc, err := url.Parse(resp.Header.Get("Location")); err != nil || loc.Query().Get("error") == "" {
			t.Errorf("302 to %q, want a Location whose query names the error", resp.Header.Get("Location"))
		}
	} else {
		tg.envelope(t, strings.SplitN(req.path, "?", 2)[0], status, raw)
	}
	if method == op.method && op.codes[status] {
		hreq := tg.request(t, method, req)
		if ok, errs := tg.contract.responses.ValidateHttpResponse(hreq, resp); !ok && (tg.lenient == nil || !tg.lenient(errs)) {
			t.Errorf("%d %.300s\nthe answer breaks the contract:%s", status, raw, describe(errs))
		}
	}
	for _, leak := range req.leaks {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("the answer carries another tenant's %q: %.300s", leak, raw)
		}
	}
	if req.written != nil && req.written(t) {
		t.Errorf("the refused request (%d) was written anyway", status)
	}
}

// request builds req for method against the target.
func (tg *hostileTarget) request(t *testing.T, method string, req hostileReq) *http.Request {
	t.Helper()
	var body io.Reader
	if req.body != "" || method == "POST" || method == "PUT" {
		body = strings.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(context.Background(), method, tg.base+req.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil && req.ctype != "" {
		hr.Header.Set("Content-Type", req.ctype)
	}
	hr.Header.Set("Accept", "application/json")
	if req.auth != "" {
		hr.Header.Set("Authorization", req.auth)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	return hr
}

func (tg *hostileTarget) do(t *testing.T, method string, req hostileReq) (*http.Response, []byte) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return sendRecorded(t, client, tg.request(t, method, req))
}

func (tg *hostileTarget) send(t *testing.T, method string, req hostileReq) (int, []byte) {
	t.Helper()
	resp, raw := tg.do(t, method, req)
	return resp.StatusCode, raw
}

// withPathParams puts value into every path parameter of op's template,
// keeping the query of concrete (the good request's path).
func withPathParams(op hostileOp, concrete, value string) string {
	_, query, _ := strings.Cut(concrete, "?")
	p := op.path
	for _, name := range op.pathParams {
		p = strings.ReplaceAll(p, "{"+name+"}", value)
	}
	if query != "" {
		p += "?" + query
	}
	return p
}

// withQuery sets the query parameter name of path to value alone, so the
// good request's own value does not win over it.
func withQuery(path, name, value string) string {
	p, query, _ := strings.Cut(path, "?")
	q, _ := url.ParseQuery(query)
	q.Set(name, value)
	return p + "?" + q.Encode()
}

// retyped is body with every member's value replaced by one of another
// JSON type: strings become numbers, everything else a string. A body that
// is no JSON object comes back unchanged.
func retyped(body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil || len(m) == 0 {
		return body
	}
	for k, v := range m {
		if _, ok := v.(string); ok {
			m[k] = 12345
		} else {
			m[k] = "not-the-type"
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// padTo pads body to n bytes: JSON with trailing spaces, a form with one
// more field, so the body is sound but for its size.
func padTo(body string, n int) string {
	if len(body) >= n {
		return body
	}
	if strings.HasPrefix(body, "{") || body == "" {
		return body + strings.Repeat(" ", n-len(body))
	}
	const pad = "&pad="
	return body + pad + strings.Repeat("x", max(0, n-len(body)-len(pad)))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedCodes(m map[int]bool) []int {
	var out []int
	for c := range m {
		out = append(out, c)
	}
	sort.Ints(out)
	return out
}

// strictJSON decodes raw into v refusing members v does not declare and
// anything after the value.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestHostileInput runs the sweep on the three APIs, each on a server of
// its own with its SQLite store.
func TestHostileInput(t *testing.T) {
	t.Run("banking", func(t *testing.T) { newBankingHostile(t).sweep(t) })
	t.Run("assistant", func(t *testing.T) { newAssistantHostile(t).sweep(t) })
	t.Run("smarthome", func(t *testing.T) { newSmarthomeHostile(t).sweep(t) })
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"partnerapi/api"
)

// contractSpec is one of api/*.yaml loaded into the validator: requests
// are checked as a client would send them, responses in strict mode, and
// statuses lists each operation's documented response codes, so a test can
// tell which of them no case provoked. The assistant and banking contract
// tests share it.
type contractSpec struct {
	requests  validator.Validator
	responses validator.Validator
	schema    schema_validation.SchemaValidator
	model     *libopenapi.DocumentModel[v3.Document]
	statuses  map[string][]string
}

// loadContract loads api/<name>.yaml. ignoredHeaders join the library's
// list of response headers strict mode ignores.
func loadContract(t *testing.T, name string, ignoredHeaders ...string) *contractSpec {
	t.Helper()
	spec := api.Spec(name)
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	// Format assertions make "format: uuid" (RqUID) a rule rather than a
	// hint; form bodies are validated so the token request's scope enum is
	// checked like any JSON body.
	opts := []config.Option{config.WithFormatAssertions(), config.WithURLEncodedBodyValidation()}
	requests, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		t.Fatalf("contract: %v", errs)
	}
	if ok, verrs := requests.ValidateDocument(); !ok {
		t.Fatalf("the contract is not valid OpenAPI: %s", describe(verrs))
	}
	// Responses are held to strict mode: a property or header the server
	// sends and the contract does not declare is drift too. Requests are
	// not, because clients send undeclared extras the references say to
	// accept (flags, attachments) and function parameters are free-form
	// JSON Schema.
	opts = append(opts, config.WithStrictMode(), config.WithStrictIgnoredHeadersExtra(ignoredHeaders...))
	responses, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		t.Fatalf("contract: %v", errs)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	c := &contractSpec{requests: requests, responses: responses, schema: schema_validation.NewSchemaValidator(opts...), model: model, statuses: map[string][]string{}}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			key := strings.ToUpper(method) + " " + path
			for code := range op.Responses.Codes.KeysFromOldest() {
				c.statuses[key] = append(c.statuses[key], code)
			}
		}
	}
	return c
}

// checkCoverage fails for every documented response that no case provoked
// (seen, by operation and status) and that unprovoked does not name with
// the reason.
func (c *contractSpec) checkCoverage(t *testing.T, seen map[string]map[string]bool, unprovoked map[string]string) {
	t.Helper()
	for op, codes := range c.statuses {
		for _, code := range codes {
			if !seen[op][code] && unprovoked[op+" "+code] == "" {
				t.Errorf("%s %s: documented, but no case provokes it", op, code)
			}
		}
	}
	for key := range unprovoked {
		i := strings.LastIndex(key, " ")
		if seen[key[:i]][key[i+1:]] {
			t.Errorf("%s is on the list of unprovoked responses, but a case provokes it", key)
		}
	}
}

// assistantContract is api/assistant.yaml with the schema of one
// server-sent event of a streamed chat completion, which OpenAPI 3.1
// cannot attach to text/event-stream itself.
type assistantContract struct {
	*contractSpec
	chunk *base.Schema
}

func loadAssistantContract(t *testing.T) *assistantContract {
	t.Helper()
	// X-Session-Id joins the headers strict mode ignores (X-Request-Id is
	// on the library's list): the contract does not repeat the two ids on
	// every response, and exchange checks both on each.
	c := &assistantContract{contractSpec: loadContract(t, "assistant", "x-session-id")}
	proxy := c.model.Model.Components.Schemas.GetOrZero("ChatCompletionChunk")
	if proxy == nil {
		t.Error("the contract has no ChatCompletionChunk schema for the events of a stream")
	} else {
		c.chunk = proxy.Schema()
	}
	return c
}

// operationOf names the contract's operation a request path falls under,
// as "METHOD /path/{param}".
func (c *contractSpec) operationOf(method, path string) string {
	segs := strings.Split(path, "/")
	for op := range c.statuses {
		m, tmpl, _ := strings.Cut(op, " ")
		ts := strings.Split(tmpl, "/")
		if m != method || len(ts) != len(segs) {
			continue
		}
		match := true
		for i := range ts {
			if ts[i] != segs[i] && !strings.HasPrefix(ts[i], "{") {
				match = false
			}
		}
		if match {
			return op
		}
	}
	return method + " " + path
}

// checkRequest holds req to the contract: refused when badRequest says a
// generated client would not send it, accepted otherwise.
func (c *contractSpec) checkRequest(t *testing.T, req *http.Request, badRequest bool) {
	t.Helper()
	ok, errs := c.requests.ValidateHttpRequest(req)
	if !ok {
		ok, errs = withoutDecodedReserved(errs)
	}
	switch {
	case !ok && !badRequest:
		t.Errorf("the contract refuses the request:%s", describe(errs))
	case ok && badRequest:
		t.Errorf("the contract accepts a request it should refuse")
	}
}

// sendRecorded sends req and returns the response with its body read (raw)
// and put back, for a validator to read again.
func sendRecorded(t *testing.T, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, raw
}

func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s at %s", f.Reason, f.FieldPath)
		}
	}
	return b.String()
}

// contractCase is one request of the table and what the server and the
// contract must say about it.
type contractCase struct {
	name   string
	method string
	path   string
	auth   string // a key of the fixture's Authorization values; "" sends none
	rqUID  string // the token endpoint's request id
	form   string // a form body (the token endpoint); otherwise body is JSON
	body   string
	status int
	// badRequest says the contract itself refuses the request (a missing
	// header, a body its schema rejects): a generated client would not
	// send it, and the server must refuse it too. The other way round, a
	// request the server refuses with 400 must be badRequest unless
	// serverOnly says why the contract cannot refuse it (checkVerdicts).
	badRequest bool
	// serverOnly is why a request the server refuses with 400 is one the
	// contract takes: the refusal depends on the client's state, or the
	// validator does not read that part of the request.
	serverOnly string
	// stream: every event's JSON must match ChatCompletionChunk.
	stream bool
	// busy: sent while a stream holds the client's only slot.
	busy bool
	// broken: sent to the fixture's server whose store cannot bill.
	broken bool
	// down: sent to the fixture's server whose database is down.
	down bool
	// lost: sent to the fixture's server whose token table is gone.
	lost bool
	// ctype is the body's Content-Type when it is neither JSON nor a form
	// (a multipart upload).
	ctype string
}

// TestAssistantContract drives every operation of api/assistant.yaml
// through a live `partnerapi serve` with the test models and validates each
// request and each response (status, headers, body, and every event of a
// stream) against the contract. Unmodified clients, some generated from
// the contract, talk to this service, so wire and contract must agree.
func TestAssistantContract(t *testing.T) {
	contract := loadAssistantContract(t)
	f := newContractFixture(t)
	chat := func(model, extra string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":8` + extra + `}`
	}
	long := strings.Repeat("Once upon a time there was a little girl. ", 10)
	// huge makes a body over the platform's 1 MiB limit.
	huge := strings.Repeat("x", 1<<20)
	rq := "72384bd5-0ca0-4cfd-9ac7-65d75258284c"
	cases := []contractCase{
		{name: "token", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: rq, form: "scope=ASSISTANT_API_CORP", status: 200},
		{name: "token provider alias", method: "POST", path: "/api/v2/oauth", auth: "basic pers", rqUID: rq, form: "scope=GIGACHAT_API_PERS", status: 200},
		{name: "token without RqUID", method: "POST", path: "/api/v2/oauth", auth: "basic corp", form: "scope=ASSISTANT_API_CORP", status: 400, badRequest: true},
		{name: "token RqUID not a UUID", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: "42", form: "scope=ASSISTANT_API_CORP", status: 400, badRequest: true},
		{name: "token without scope", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: rq, form: "", status: 400, badRequest: true},
		{name: "token unknown scope", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: rq, form: "scope=NOPE", status: 400, badRequest: true},
		{name: "token scope not entitled", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: rq, form: "scope=ASSISTANT_API_PERS", status: 400,
			serverOnly: "the scope is one the contract names, but not this client's"},
		{name: "token without credentials", method: "POST", path: "/api/v2/oauth", rqUID: rq, form: "scope=ASSISTANT_API_CORP", status: 401, badRequest: true},
		{name: "token undecodable credentials", method: "POST", path: "/api/v2/oauth", auth: "basic garbled", rqUID: rq, form: "scope=ASSISTANT_API_CORP", status: 401},
		{name: "token wrong secret", method: "POST", path: "/api/v2/oauth", auth: "basic wrong", rqUID: rq, form: "scope=ASSISTANT_API_CORP", status: 401},
		// The contract refuses a scope that is no scope name, and the
		// server refuses the body for its size first.
		{name: "token body over the limit", method: "POST", path: "/api/v2/oauth", auth: "basic corp", rqUID: rq, form: "scope=" + huge, status: 413, badRequest: true},
		{name: "token store failure", method: "POST", path: "/api/v2/oauth", auth: "basic broken", rqUID: rq, form: "scope=ASSISTANT_API_CORP", status: 500, broken: true},

		// The legacy password flow: Basic client_id:client_secret is the
		// authorization key's value, so the same Authorization values.
		{name: "legacy token", method: "POST", path: "/api/v1/token", auth: "basic corp", status: 200},
		{name: "legacy token without credentials", method: "POST", path: "/api/v1/token", status: 401, badRequest: true},
		{name: "legacy token undecodable credentials", method: "POST", path: "/api/v1/token", auth: "basic garbled", status: 401},
		{name: "legacy token wrong password", method: "POST", path: "/api/v1/token", auth: "basic wrong", status: 401},
		{name: "legacy token store failure", method: "POST", path: "/api/v1/token", auth: "basic broken", status: 500, broken: true},

		{name: "models", method: "GET", path: "/api/v1/models", auth: "corp", status: 200},
		{name: "models without token", method: "GET", path: "/api/v1/models", status: 401, badRequest: true},
		{name: "models bad token", method: "GET", path: "/api/v1/models", auth: "bad", status: 401},
		{name: "model", method: "GET", path: "/api/v1/models/stories260K", auth: "corp", status: 200},
		{name: "model latest", method: "GET", path: "/api/v1/models/stories260K:latest", auth: "corp", status: 200},
		{name: "model embedder", method: "GET", path: "/api/v1/models/tinyembed:1.0", auth: "corp", status: 200},
		{name: "model unknown", method: "GET", path: "/api/v1/models/nope", auth: "corp", status: 404},
		{name: "model without token", method: "GET", path: "/api/v1/models/stories260K", status: 401, badRequest: true},
		{name: "model bad token", method: "GET", path: "/api/v1/models/stories260K", auth: "bad", status: 401},

		{name: "chat", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("stories260K", ""), status: 200},
		{name: "chat n 2 every option", method: "POST", path: "/api/v1/chat/completions", auth: "pers",
			body:   `{"model":"stories260K:latest","messages":[{"role":"system","content":"sys"},{"role":"user","content":"Hi"}],"temperature":0.5,"top_p":1,"n":2,"max_tokens":16,"repetition_penalty":1,"update_interval":0,"profanity_check":false,"function_call":"none","flags":["x"]}`,
			status: 200},
		// The bodies of reference §3.2 that real clients send, but for the
		// model and a short max_tokens; toolstory is stories260K declared
		// to support functions.
		{name: "chat npm client body", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body: `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"Hi"}],"temperature":0.5,"max_tokens":16,"model":"stories260K","profanity_check":false}`, status: 200},
		{name: "chat function result body", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body:   `{"model":"toolstory","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","function_call":{"name":"f","arguments":{"a":1}},"functions_state_id":"abc"},{"role":"function","name":"f","content":"{\"r\":1}"}],"functions":[{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}],"function_call":"auto","repetition_penalty":1,"update_interval":0,"profanity_check":false,"max_tokens":16}`,
			status: 200},
		{name: "chat stream", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("stories260K", `,"stream":true`), status: 200, stream: true},
		// Reference §2: POST bodies are application/json; another type
		// is a bad request format, not JSON read regardless.
		{name: "chat as text/plain", method: "POST", path: "/api/v1/chat/completions", auth: "corp", ctype: "text/plain", body: chat("stories260K", ""), status: 400, badRequest: true},
		{name: "chat stream n 2", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("stories260K", `,"stream":true,"n":2,"update_interval":0.01`), status: 200, stream: true},
		{name: "chat without token", method: "POST", path: "/api/v1/chat/completions", body: chat("stories260K", ""), status: 401, badRequest: true},
		{name: "chat bad token", method: "POST", path: "/api/v1/chat/completions", auth: "bad", body: chat("stories260K", ""), status: 401},
		{name: "chat not JSON", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: `{"model":`, status: 400, badRequest: true},
		{name: "chat without messages", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: `{"model":"stories260K","messages":[]}`, status: 400, badRequest: true},
		{name: "chat empty model", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: `{"model":"","messages":[{"role":"user","content":"x"}]}`, status: 400, badRequest: true},
		{name: "chat max_tokens 0", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: `{"model":"stories260K","messages":[{"role":"user","content":"x"}],"max_tokens":0}`, status: 422, badRequest: true},
		{name: "chat message without role", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: `{"model":"stories260K","messages":[{"content":"x"}]}`, status: 400, badRequest: true},
		{name: "chat no balance", method: "POST", path: "/api/v1/chat/completions", auth: "broke", body: chat("stories260K", ""), status: 402},
		{name: "chat unknown model", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("nope", ""), status: 404},
		{name: "chat over the window", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body: `{"model":"stories260K","messages":[{"role":"user","content":"` + strings.Repeat("Once upon a time there was a little girl. ", 300) + `"}]}`, status: 413},
		{name: "chat body over the limit", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body: `{"model":"stories260K","messages":[{"role":"user","content":"` + huge + `"}]}`, status: 413},
		{name: "chat repetition_penalty 0", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("stories260K", `,"repetition_penalty":0`), status: 422, badRequest: true},
		{name: "chat temperature 3", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("stories260K", `,"temperature":3`), status: 422, badRequest: true},
		{name: "chat second system message", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body: `{"model":"stories260K","messages":[{"role":"user","content":"x"},{"role":"system","content":"y"}]}`, status: 422},
		{name: "chat functions unsupported", method: "POST", path: "/api/v1/chat/completions", auth: "corp",
			body: chat("stories260K", `,"functions":[{"name":"weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],"function_call":{"name":"weather"}`), status: 422},
		{name: "chat embedder model", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: chat("tinyembed", ""), status: 422},
		{name: "chat over the concurrency limit", method: "POST", path: "/api/v1/chat/completions", auth: "pers", body: chat("stories260K", ""), status: 429, busy: true},

		{name: "tokens count", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"stories260K","input":["First text","Второй"]}`, status: 200},
		{name: "tokens count without token", method: "POST", path: "/api/v1/tokens/count", body: `{"model":"stories260K","input":["x"]}`, status: 401, badRequest: true},
		{name: "tokens count bad token", method: "POST", path: "/api/v1/tokens/count", auth: "bad", body: `{"model":"stories260K","input":["x"]}`, status: 401},
		{name: "tokens count without model", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"input":["x"]}`, status: 400, badRequest: true},
		{name: "tokens count empty model", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"","input":["x"]}`, status: 400, badRequest: true},
		{name: "tokens count without input", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"stories260K"}`, status: 400, badRequest: true},
		{name: "tokens count input not an array", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"stories260K","input":"x"}`, status: 400, badRequest: true},
		{name: "tokens count body over the limit", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"stories260K","input":["` + huge + `"]}`, status: 413},
		{name: "tokens count unknown model", method: "POST", path: "/api/v1/tokens/count", auth: "corp", body: `{"model":"nope","input":["x"]}`, status: 404},

		{name: "balance prepaid", method: "GET", path: "/api/v1/balance", auth: "pers", status: 200},
		{name: "balance postpaid", method: "GET", path: "/api/v1/balance", auth: "corp", status: 403},
		{name: "balance without token", method: "GET", path: "/api/v1/balance", status: 401, badRequest: true},
		{name: "balance bad token", method: "GET", path: "/api/v1/balance", auth: "bad", status: 401},

		{name: "embeddings", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"tinyembed","input":["Once upon a time","The cat"]}`, status: 200},
		{name: "embeddings one string", method: "POST", path: "/api/v1/embeddings", auth: "pers", body: `{"model":"tinyembed","input":"The cat"}`, status: 200},
		{name: "embeddings without token", method: "POST", path: "/api/v1/embeddings", body: `{"model":"tinyembed","input":["x"]}`, status: 401, badRequest: true},
		{name: "embeddings bad token", method: "POST", path: "/api/v1/embeddings", auth: "bad", body: `{"model":"tinyembed","input":["x"]}`, status: 401},
		{name: "embeddings empty input", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"tinyembed","input":[]}`, status: 400, badRequest: true},
		{name: "embeddings input a number", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"tinyembed","input":5}`, status: 400, badRequest: true},
		{name: "embeddings no balance", method: "POST", path: "/api/v1/embeddings", auth: "broke", body: `{"model":"tinyembed","input":["x"]}`, status: 402},
		{name: "embeddings unknown model", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"nope","input":["x"]}`, status: 404},
		{name: "embeddings default model absent", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"input":["x"]}`, status: 404},
		{name: "embeddings over the window", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"tinyembed","input":["short","` + long + `"]}`, status: 413},
		{name: "embeddings body over the limit", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"tinyembed","input":["` + huge + `"]}`, status: 413},
		{name: "embeddings chat model", method: "POST", path: "/api/v1/embeddings", auth: "corp", body: `{"model":"stories260K","input":["x"]}`, status: 422},
		{name: "embeddings over the concurrency limit", method: "POST", path: "/api/v1/embeddings", auth: "pers", body: `{"model":"tinyembed","input":["x"]}`, status: 429, busy: true},

		{name: "validate function", method: "POST", path: "/api/v1/functions/validate", auth: "corp",
			body: `{"name":"weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"few_shot_examples":[{"request":"Weather in Moscow?","params":{"city":"Moscow"}}]}`, status: 200},
		{name: "validate invalid function", method: "POST", path: "/api/v1/functions/validate", auth: "corp", body: `{"name":"1bad","parameters":{"type":"string"}}`, status: 200},
		{name: "validate function without name", method: "POST", path: "/api/v1/functions/validate", auth: "corp", body: `{"description":"d"}`, status: 200},
		{name: "validate without token", method: "POST", path: "/api/v1/functions/validate", body: `{"name":"f","parameters":{"type":"object"}}`, status: 401, badRequest: true},
		{name: "validate bad token", method: "POST", path: "/api/v1/functions/validate", auth: "bad", body: `{"name":"f","parameters":{"type":"object"}}`, status: 401},
		{name: "validate body over the limit", method: "POST", path: "/api/v1/functions/validate", auth: "corp", body: `{"name":"f","description":"` + huge + `"}`, status: 413},
		{name: "validate not an object", method: "POST", path: "/api/v1/functions/validate", auth: "corp", body: `[1]`, status: 400, badRequest: true},

		// The server generates, then cannot record the usage: the answer
		// is an error, not an unbilled generation.
		{name: "chat unbillable", method: "POST", path: "/api/v1/chat/completions", auth: "broken corp", body: chat("stories260K", ""), status: 500, broken: true},
		{name: "embeddings unbillable", method: "POST", path: "/api/v1/embeddings", auth: "broken corp", body: `{"model":"tinyembed","input":["x"]}`, status: 500, broken: true},

		{name: "health", method: "GET", path: "/healthz", status: 200},
		{name: "metrics", method: "GET", path: "/metrics", status: 200},
		{name: "contract", method: "GET", path: "/openapi.yaml", status: 200},
	}
	cases = append(cases, fileCases(t, f, chat)...)
	lost := f.lostTokensCases(t, chat)
	cases = append(cases, lost...)
	outage := f.outageCases(t, chat)
	if f.downBase != "" {
		cases = append(cases, outage...)
	}
	seen := map[string]map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			op := contract.operationOf(tc.method, tc.path)
			if seen[op] == nil {
				seen[op] = map[string]bool{}
			}
			seen[op][fmt.Sprint(f.check(t, contract, tc))] = true
		})
	}
	// The token endpoint's rate limit is a documented response too; it
	// needs a burst, so it is checked apart from the table.
	t.Run("token over the rate limit", func(t *testing.T) {
		tc := contractCase{method: "POST", path: "/api/v2/oauth", auth: "basic rate", rqUID: rq, form: "scope=ASSISTANT_API_B2B", status: 429}
		for range 20 {
			if f.exchange(t, contract, tc) == 429 {
				seen["POST /api/v2/oauth"]["429"] = true
				return
			}
		}
		t.Fatal("20 token requests in a burst were never answered 429")
	})
	t.Run("legacy token over the rate limit", func(t *testing.T) {
		tc := contractCase{method: "POST", path: "/api/v1/token", auth: "basic legacy rate", status: 429}
		for range 20 {
			if f.exchange(t, contract, tc) == 429 {
				seen["POST /api/v1/token"]["429"] = true
				return
			}
		}
		t.Fatal("20 legacy token requests in a burst were never answered 429")
	})
	// Every documented response must be provoked, or be one this server
	// cannot give with the test models, named here with the reason.
	unprovoked := map[string]string{
		"GET /healthz 503":                  "the store is in-process SQLite",
		"GET /healthz 500":                  "only a panic; TestAssistantContractPlatformFailures provokes it in-process",
		"GET /metrics 500":                  "only a failing collector or a panic; TestAssistantContractPlatformFailures provokes both in-process",
		"GET /openapi.yaml 500":             "only a panic; TestAssistantContractPlatformFailures provokes it in-process",
		"POST /api/v1/chat/completions 503": "only an upstream model's server can be unreachable; assistant_upstream_e2e_test covers it",
		"POST /api/v1/embeddings 503":       "only an upstream model's server can be unreachable; assistant_upstream_e2e_test covers it",
	}
	var ops []string
	for _, tc := range outage {
		ops = append(ops, contract.operationOf(tc.method, tc.path))
	}
	unprovokedOutage(unprovoked, seen, ops, f.downBase != "")
	contract.checkCoverage(t, seen, unprovoked)
	// Each /api/v1 operation can fail inside (its token, looked up in the
	// store, cannot be read), so each must have a lost-tokens row: an
	// operation added to the contract without one would leave its 500
	// unchecked.
	rowOf := map[string]bool{}
	for _, tc := range lost {
		rowOf[contract.operationOf(tc.method, tc.path)] = true
	}
	for op := range contract.statuses {
		if _, path, _ := strings.Cut(op, " "); strings.HasPrefix(path, "/api/v1/") && !rowOf[op] {
			t.Errorf("%s: no row of bearerRows, so nothing checks that the contract documents its 500", op)
		}
	}
}

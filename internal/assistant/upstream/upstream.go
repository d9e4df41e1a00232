// Package upstream serves assistant models from an OpenAI-compatible server
// (llama-server, vLLM, Ollama) so the chat service can route some models away
// from the in-process engine.
package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"partnerapi/internal/assistant"
)

// Engine is an assistant.Engine backed by one OpenAI-compatible base URL.
type Engine struct {
	// ModelsTTL is how long a fetched model list is reused (0: never).
	ModelsTTL time.Duration
	// ModelsTimeout bounds one GET /v1/models.
	ModelsTimeout time.Duration
	// FanOut bounds how many of one request's choices are generated at
	// once when n > 1 is fanned out as n requests (fanout.go).
	FanOut int
	// extra lends a fan-out the places of its pool's replica beyond the
	// chat's own (nil outside a pool).
	extra extraSlots

	// base is the server's URL without its query, which query holds
	// (an API key a gateway takes as ?api_key=, say) to be added after
	// each request's path; safe names the server in errors (redactedBase).
	base, query, safe string
	client            *http.Client
	served            map[string]Served // by served name; names without an entry pass through

	// flight merges concurrent fetches of the model list: when the cached
	// one expires, every chat request resolving its model at that moment
	// would otherwise send a GET /v1/models of its own.
	flight singleflight.Group

	mu sync.Mutex
	// gen counts forget calls, so a model list fetched from the server as
	// it was before is not cached over what forget dropped.
	gen      uint64
	cached   []assistant.ModelInfo
	cachedAt time.Time
	remotes  map[string]remoteModel // by remote id: what the cached list tells
	// ownedBy is the owned_by the server's list last gave each served
	// name. forget keeps it: while the server is down the model is still
	// listed (MultiEngine.routedInfo), and a client comparing two model
	// lists should not see its owner turn into "upstream" and back with
	// the server's reachability.
	ownedBy map[string]string
	// oneChoice is set once the upstream refused a request for n > 1
	// choices although its model list looked like vLLM's: from then on
	// every such request is fanned out.
	oneChoice bool
	propsCtx  int       // llama-server's n_ctx from /props, 0 unknown
	propsAt   time.Time // when /props was last asked
	// noTokenizeAt is when the upstream last refused /tokenize (Ollama):
	// within tokenizeRetry of it counts are estimated without asking, so a
	// request does not spend a failed round trip every time.
	noTokenizeAt time.Time
	// tokenizeAs is the /tokenize request shape the upstream last
	// accepted (estimated: none yet).
	tokenizeAs counter
}

// tokenizeRetry is how long an upstream without /tokenize is not asked
// again; an upstream replaced behind the same URL is noticed after it.
const tokenizeRetry = time.Minute

// Defaults of New.
const (
	DefaultModelsTTL     = 5 * time.Second
	DefaultModelsTimeout = 10 * time.Second
	DefaultFanOut        = 4
)

// remoteModel is what an upstream's model list tells of one model beyond
// its id.
type remoteModel struct {
	// ctxLen is vLLM's max_model_len, 0 when not listed.
	ctxLen int
	// nativeN is true when the server generates n > 1 choices in one
	// request: vLLM (and SGLang) list max_model_len, and vLLM owns its
	// models as "vllm". llama-server refuses n != 1 and Ollama ignores
	// it, and neither lists these.
	nativeN bool
}

// Served maps one served model onto the upstream.
type Served struct {
	Remote string // the upstream's model id ("" means the served name)
	Type   string // assistant.TypeChat (default) or assistant.TypeEmbedder
}

// New returns an engine for base (e.g. "http://127.0.0.1:8080").
func New(base string, client *http.Client) *Engine {
	if client == nil {
		client = http.DefaultClient
	}
	e := &Engine{ModelsTTL: DefaultModelsTTL, ModelsTimeout: DefaultModelsTimeout, FanOut: DefaultFanOut,
		base: strings.TrimRight(base, "/"), safe: redactedBase(base), client: client, served: map[string]Served{}}
	// A query string must follow each request's path, not precede it.
	if u, err := url.Parse(base); err == nil && (u.RawQuery != "" || u.ForceQuery) {
		e.query = u.RawQuery
		u.RawQuery, u.ForceQuery = "", false
		e.base = strings.TrimRight(u.String(), "/")
	}
	return e
}

// Serve configures how the model served as name maps onto the upstream:
// its id there and its type. Call it before serving requests.
func (e *Engine) Serve(name string, s Served) { e.served[name] = s }

// remote is the upstream's id of a served model.
func (e *Engine) remote(name string) string {
	if s, ok := e.served[name]; ok && s.Remote != "" {
		return s.Remote
	}
	return name
}

// ModelInfo describes a served model without asking the upstream: chat
// models support functions (OpenAI tools), embedders do not chat.
func (e *Engine) ModelInfo(name string) assistant.ModelInfo {
	info := e.configuredInfo(name)
	e.mu.Lock()
	if o, ok := e.ownedBy[name]; ok {
		info.OwnedBy = o
	}
	e.mu.Unlock()
	return info
}

// learntOwner reports whether a model list of the server has named the
// owner of the served model.
func (e *Engine) learntOwner(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.ownedBy[name]
	return ok
}

// configuredInfo is what the configuration alone tells of a served model,
// the base a fetched model list fills in.
func (e *Engine) configuredInfo(name string) assistant.ModelInfo {
	typ := e.served[name].Type
	if typ == "" {
		typ = assistant.TypeChat
	}
	return assistant.ModelInfo{Name: name, Version: "1.0", OwnedBy: "upstream", Type: typ, SupportsFunctions: typ == assistant.TypeChat}
}

// NativeFunctionCalls implements assistant.NativeFunctionCaller: the
// upstream returns tool calls parsed.
func (e *Engine) NativeFunctionCalls(string) bool { return true }

var (
	_ assistant.Engine               = (*Engine)(nil)
	_ assistant.NativeFunctionCaller = (*Engine)(nil)
	_ assistant.Embedder             = (*Engine)(nil)
)

func (e *Engine) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	// The request carries ctx so cancellation closes the upstream connection.
	target := e.base + path
	if e.query != "" {
		target += "?" + e.query
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		// url.Parse's error quotes the URL whole, credentials included.
		return nil, fmt.Errorf("upstream: %s%s: invalid URL", e.safe, path)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err == nil {
		return resp, nil
	}
	// The transport's error names the URL with its user name (net/http
	// hides only the password) and its query: the server is named as
	// metrics name it instead, before the error goes anywhere.
	err = redactURL(err, e.safe+path)
	if ctx.Err() == nil {
		// Refused or reset connections, dial and header timeouts: the
		// upstream is down, which clients may retry, unlike a fault of
		// ours, and another replica may answer (pool.go).
		return nil, &serverFault{err: fmt.Errorf("upstream: %w: %w", assistant.ErrUnavailable, err), down: true, reason: transportReason(err)}
	}
	return nil, err
}

// upstreamError turns a non-2xx response into an error, mapping context
// overflows (which upstreams report as 400 with varying wording) to
// assistant.ErrContextWindow so our transports answer as for the local engine.
func upstreamError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.ToLower(string(b))
	if strings.Contains(msg, "context") && (strings.Contains(msg, "exceed") || strings.Contains(msg, "length") || strings.Contains(msg, "window")) {
		// The text may name the window and the prompt's size, which tell
		// the max_tokens that would have fitted (context.go).
		return parseOverflow(msg, fmt.Errorf("upstream: %w: %s", assistant.ErrContextWindow, strings.TrimSpace(string(b))))
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		// A server or the proxy in front of it refusing the request as too
		// large, in words of its own (nginx answers an HTML page): the
		// client's 413 as well, never a 500 (inference reference §10).
		return fmt.Errorf("upstream: %w: status 413: %s", assistant.ErrContextWindow, strings.TrimSpace(string(b)))
	}
	if strings.Contains(msg, "only one completion choice") {
		// llama-server's refusal of n != 1: answered by fanning out.
		return fmt.Errorf("upstream: %w: %s", errOneChoice, strings.TrimSpace(string(b)))
	}
	if resp.StatusCode == http.StatusNotFound && strings.Contains(msg, "model") {
		// vLLM's "The model `x` does not exist", Ollama's "model \"x\" not
		// found", a llama-server router's "model not found": this server
		// serves another model, and another replica of the name may
		// serve this one (pool.go). It is up, so it is not down.
		return &serverFault{err: fmt.Errorf("upstream: %w: %s", assistant.ErrNoSuchModel, strings.TrimSpace(string(b))), noModel: true, reason: ReasonNoModel}
	}
	switch resp.StatusCode {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		// llama-server loading its model, Ollama's full queue, a vLLM
		// refusing more: busy now, and the client may retry.
		return &serverFault{err: fmt.Errorf("upstream: %w: %s", assistant.ErrEngineBusy, strings.TrimSpace(string(b))), down: true, reason: ReasonBusy}
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		// A proxy in front of the server could not reach it.
		return &serverFault{err: fmt.Errorf("upstream: status %d: %s", resp.StatusCode, strings.TrimSpace(string(b))), down: true, reason: ReasonBadGateway}
	}
	if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity {
		// The server refused the request itself (a parameter its model does
		// not take, a tool schema it cannot parse): the client's error,
		// answered with the same status and the server's words in the API's
		// body (reference §4: 400 free text, 422 "Invalid params: …"), not a
		// 500, and not a reason to try another replica.
		return fmt.Errorf("upstream: %w", refusal(resp.StatusCode, b))
	}
	return fmt.Errorf("upstream: status %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// maxRefusalText bounds the server's words passed on to the client.
const maxRefusalText = 300

// refusal is an upstream's 400 or 422 as the API's InvalidParams, with the
// message the OpenAI-compatible servers put in their error bodies: vLLM's
// {"message": …}, OpenAI's and llama-server's {"error": {"message": …}},
// Ollama's {"error": "…"}, else the body's text.
func refusal(status int, body []byte) *assistant.InvalidParams {
	var e struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	text := ""
	if json.Unmarshal(body, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		switch {
		case e.Message != "":
			text = e.Message
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			text = inner.Message
		default:
			_ = json.Unmarshal(e.Error, &text)
		}
	} else {
		text = string(body)
	}
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > maxRefusalText {
		text = string(r[:maxRefusalText]) + "…"
	}
	if text == "" {
		text = "refused by the upstream server"
	}
	if status == http.StatusUnprocessableEntity {
		return &assistant.InvalidParams{Status: status, Message: "Invalid params: " + text}
	}
	return &assistant.InvalidParams{Status: status, Message: text}
}

// Models lists GET /v1/models.
//
// Every chat request resolves its model through Models, so a successful
// list is reused for ModelsTTL instead of costing each request a round trip
// to the upstream, and the requests that find it expired at once share one
// fetch (flight) rather than each sending its own. A slow upstream is given
// ModelsTimeout, after which the request fails rather than hangs.
//
// The shared fetch runs on a context of its own, bounded by ModelsTimeout:
// a caller that gives up (its client hung up) must not fail the fetch that
// others wait for. Each caller still returns when its own context ends.
func (e *Engine) Models(ctx context.Context) ([]assistant.ModelInfo, error) {
	e.mu.Lock()
	if e.ModelsTTL > 0 && e.cached != nil && time.Since(e.cachedAt) < e.ModelsTTL {
		out := slices.Clone(e.cached)
		e.mu.Unlock()
		return out, nil
	}
	e.mu.Unlock()
	return sharedModels(ctx, &e.flight, e.refreshModels)
}

// sharedModels runs fetch once for all the callers that ask while it is
// under way. It runs on a context of its own, so a caller that gives up
// does not fail it for the others, and every caller gets a copy of its
// own list: callers change theirs (a pool sets the smallest window of its
// replicas).
func sharedModels(ctx context.Context, g *singleflight.Group, fetch func(context.Context) ([]assistant.ModelInfo, error)) ([]assistant.ModelInfo, error) {
	ch := g.DoChan("models", func() (any, error) {
		return fetch(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return slices.Clone(r.Val.([]assistant.ModelInfo)), nil
	}
}

// refreshModels fetches the model list and caches it, unless forget was
// called while it was under way.
func (e *Engine) refreshModels(ctx context.Context) ([]assistant.ModelInfo, error) {
	e.mu.Lock()
	gen := e.gen
	e.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, e.ModelsTimeout)
	defer cancel()
	out, remotes, err := e.fetchModels(lctx)
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		// Every kind of server answers its model list at once, busy or
		// not, so one that does not is hung: a pool takes it out of
		// rotation rather than send it chats that wait for their header
		// timeout.
		return nil, &serverFault{err: fmt.Errorf("upstream: %w: no model list within %v", assistant.ErrUnavailable, e.ModelsTimeout), down: true, reason: ReasonTimeout}
	}
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.gen == gen {
		e.cached, e.cachedAt, e.remotes = slices.Clone(out), time.Now(), remotes
		e.ownedBy = make(map[string]string, len(out))
		for _, m := range out {
			e.ownedBy[m.Name] = m.OwnedBy
		}
	}
	e.mu.Unlock()
	return out, nil
}

// fetchModels lists the upstream's models and, by remote id, what the list
// tells of them: the context length it names (vLLM's max_model_len) and
// whether the server answers n > 1 itself.
func (e *Engine) fetchModels(ctx context.Context) ([]assistant.ModelInfo, map[string]remoteModel, error) {
	resp, err := e.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, nil, upstreamError(resp)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, nil, fmt.Errorf("upstream: models: %w", err)
	}
	remotes := map[string]remoteModel{}
	// Served names stand for the remote ids they map to.
	byRemote := map[string][]string{}
	for name := range e.served {
		byRemote[e.remote(name)] = append(byRemote[e.remote(name)], name)
	}
	out := make([]assistant.ModelInfo, 0, len(list.Data))
	for _, m := range list.Data {
		remotes[m.ID] = remoteModel{ctxLen: max(m.MaxModelLen, 0), nativeN: m.MaxModelLen > 0 || m.OwnedBy == "vllm"}
		names := byRemote[m.ID]
		if len(names) == 0 {
			names = []string{m.ID}
		}
		for _, name := range names {
			info := e.configuredInfo(name)
			if m.OwnedBy != "" {
				info.OwnedBy = m.OwnedBy
			}
			info.ContextWindow = m.MaxModelLen
			out = append(out, info)
		}
	}
	return out, remotes, nil
}

// lists asks the upstream's model list, bypassing the cache: the cheapest
// request that every kind of server (llama-server, vLLM, Ollama) answers,
// and one that llama-server refuses with 503 while its model still loads.
// With check it also reports whether the list names a model the engine
// serves (a pool's engine serves one), as its remote id or an Ollama tag
// of it; without, the body is not read as a list at all, so a server
// whose list is no JSON still counts as answering.
func (e *Engine) lists(ctx context.Context, timeout time.Duration, check bool) (listed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := e.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, upstreamError(resp)
	}
	if !check {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return false, nil
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return false, fmt.Errorf("upstream: models: %w", err)
	}
	for name := range e.served {
		remote := e.remote(name)
		for _, m := range list.Data {
			// Ollama lists "llama3:latest" for a model asked as "llama3".
			if m.ID == remote || (!strings.Contains(remote, ":") && m.ID == remote+":latest") {
				return true, nil
			}
		}
	}
	return false, nil
}

// forget drops what the engine learnt of its server: the model list, the
// window /props named, the /tokenize shape and whether it answers n > 1. A
// server that comes back after being down may be another build, or
// another kind of server, behind the same URL.
func (e *Engine) forget() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen++
	e.cached, e.cachedAt, e.remotes = nil, time.Time{}, nil
	e.oneChoice = false
	e.propsCtx, e.propsAt = 0, time.Time{}
	e.noTokenizeAt, e.tokenizeAs = time.Time{}, estimated
}

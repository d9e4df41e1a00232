package main

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream"
)

// upstreamRoute is one model name given to --assistant-upstream: the base
// URLs of its replicas and how the served model maps onto them.
type upstreamRoute struct {
	bases  []string
	served upstream.Served
}

// upstreamFlag collects --assistant-upstream NAME=URL[#model=ID&type=TYPE];
// models it names are served by those OpenAI-compatible servers, the rest
// by the local engine. The URL fragment (never sent to the server) carries
// the options: the upstream's id for the model when it differs from NAME,
// and type=embedder for an embeddings model (served at /embeddings). A NAME
// given again adds a replica of it (upstream.Pool), which must take the same
// options: one name is one model, whichever server answers.
type upstreamFlag map[string]upstreamRoute

func (f *upstreamFlag) String() string {
	var parts []string
	for name, r := range *f {
		for _, base := range r.bases {
			parts = append(parts, shown(name+"="+base))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (f *upstreamFlag) Set(v string) error {
	// The environment form (PARTNERAPI_ASSISTANT_UPSTREAM) is a single
	// value, so a deployment configured through its environment names
	// several upstreams and replicas in it separated by spaces or
	// newlines, which no URL holds unescaped.
	if fields := strings.Fields(v); len(fields) > 1 {
		for _, one := range fields {
			if err := f.Set(one); err != nil {
				return err
			}
		}
		return nil
	}
	v = strings.TrimSpace(v)
	name, raw, ok := strings.Cut(v, "=")
	u, err := url.Parse(raw)
	if !ok || name == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("want NAME=URL[#model=ID&type=chat|embedder], got %q", shown(v))
	}
	opts, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return fmt.Errorf("%q: options after # are model=ID&type=chat|embedder: %v", shown(v), err)
	}
	served := upstream.Served{Remote: opts.Get("model"), Type: opts.Get("type")}
	for k := range opts {
		if k != "model" && k != "type" {
			return fmt.Errorf("%q: unknown option %q (want model, type)", shown(v), k)
		}
	}
	switch served.Type {
	case "", assistant.TypeChat, assistant.TypeEmbedder:
	default:
		return fmt.Errorf("%q: type must be chat or embedder", shown(v))
	}
	u.Fragment, u.RawFragment = "", ""
	base := u.String()
	if *f == nil {
		*f = upstreamFlag{}
	}
	r, seen := (*f)[name]
	if !seen {
		(*f)[name] = upstreamRoute{bases: []string{base}, served: served}
		return nil
	}
	// The options are compared as they mean: no model= is NAME, no type=
	// is chat.
	if canonical(name, served) != canonical(name, r.served) {
		return fmt.Errorf("%q: every replica of %s takes the same options, and an earlier one has %s", shown(v), name, optionsOf(r.served))
	}
	// Metrics and logs name a replica by its host and path, so two of
	// them there would be one series (and fail every scrape).
	for _, b := range r.bases {
		if upstream.Host(b) == upstream.Host(base) {
			return fmt.Errorf("%q: %s is already a replica of %s", shown(v), upstream.Host(base), name)
		}
	}
	r.bases = append(r.bases, base)
	(*f)[name] = r
	return nil
}

// Redact quotes v without its credentials, for the flag package's own
// "invalid value" error (see redactFlagError).
func (f *upstreamFlag) Redact(v string) string { return shown(v) }

// shown is an --assistant-upstream value as its errors quote it, without
// the credentials its URL may carry: the user name and password, and the
// query, where a gateway may take an API key. A deployment keeps them out
// of the process list by giving them in the environment, and the error
// reaches the terminal or the service's log. A value whose URL does not
// parse is not quoted at all when it may hold either.
func shown(v string) string {
	name, raw, ok := strings.Cut(v, "=")
	if !ok || strings.ContainsAny(name, ":/@?") {
		// No NAME= before the URL: the first = is in its query.
		name, raw, ok = "", v, false
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		safe := u.Scheme + "://"
		if u.User != nil {
			safe += "xxxxx@"
		}
		safe += u.Host + u.EscapedPath()
		if u.RawQuery != "" || u.ForceQuery {
			safe += "?xxxxx"
		}
		if u.Fragment != "" {
			safe += "#" + u.EscapedFragment()
		}
		raw = safe
	} else if strings.ContainsAny(raw, "@?") {
		raw = "(URL not shown: it may hold credentials)"
	}
	if !ok {
		return raw
	}
	return name + "=" + raw
}

// canonical spells out the defaults of s, the options of model name.
func canonical(name string, s upstream.Served) upstream.Served {
	if s.Remote == "" {
		s.Remote = name
	}
	if s.Type == "" {
		s.Type = assistant.TypeChat
	}
	return s
}

// optionsOf is s as the URL fragment that gave it.
func optionsOf(s upstream.Served) string {
	q := url.Values{}
	if s.Remote != "" {
		q.Set("model", s.Remote)
	}
	if s.Type != "" {
		q.Set("type", s.Type)
	}
	if len(q) == 0 {
		return "none"
	}
	return "#" + q.Encode()
}

// route returns local unchanged when no upstream is configured; else an
// engine routing each configured name to the pool of its replicas, and
// the pools, which the caller closes on shutdown (their probes stop).
func (f upstreamFlag) route(local assistant.Engine, opts upstream.PoolOptions) (assistant.Engine, []*upstream.Pool) {
	if len(f) == 0 {
		return local, nil
	}
	m := &assistant.MultiEngine{Default: local, Routes: map[string]assistant.Engine{}}
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	slices.Sort(names)
	pools := make([]*upstream.Pool, 0, len(names))
	for _, name := range names {
		r := f[name]
		p := upstream.NewPool(name, r.served, r.bases, opts)
		m.Routes[name] = p
		pools = append(pools, p)
	}
	return m, pools
}

// upstreamCollector exports the replicas of every upstream model to
// Prometheus, read at each scrape (upstream.Pool.Stats): how the load
// spreads, which replica fails, which is out of rotation. Replicas are
// named by host and path, never by a URL that may carry credentials.
type upstreamCollector struct {
	pools                               []*upstream.Pool
	inFlight, requests, failures, alive *prometheus.Desc
	queued, ttft, prompt, completion    *prometheus.Desc
}

func newUpstreamCollector(pools []*upstream.Pool) *upstreamCollector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("partnerapi_upstream_"+name, help, append([]string{"model", "host"}, labels...), nil)
	}
	return &upstreamCollector{
		pools:    pools,
		inFlight: desc("in_flight", "Requests under way on an upstream replica."),
		requests: desc("requests_total", "Requests sent to an upstream replica (a request that failed over counts on both replicas)."),
		// The model lists a replica failed to give are counted too: they
		// take it out of rotation as a failed chat does.
		failures: desc("failures_total", "Requests and model lists that failed for the replica's sake, by reason: unreachable, timeout (dial, headers, or no model list within 10 s), busy (429/503), bad_gateway (502/504), stream (cut short) or no_model (404 for the model).", "reason"),
		alive:    desc("healthy", "1 while the replica is in rotation, 0 while it is down and probed."),
		// The queue is the model's, not a replica's: a request waits for
		// whichever replica has room first.
		queued: prometheus.NewDesc("partnerapi_upstream_queued", "Requests of an upstream model waiting for a replica under --assistant-upstream-concurrency.", []string{"model"}, nil),
		// What the embedded engine's metrics tell of its chats, told of
		// the upstream models' (engine_metrics.go).
		ttft:       prometheus.NewDesc("partnerapi_upstream_time_to_first_token_seconds", "Time from a chat reaching an upstream model to its first token: waiting for a replica, the upstream's own queue and prefill.", []string{"model"}, nil),
		prompt:     prometheus.NewDesc("partnerapi_upstream_prompt_tokens_total", "Prompt tokens of an upstream model's chats, as their usage counts them.", []string{"model"}, nil),
		completion: prometheus.NewDesc("partnerapi_upstream_completion_tokens_total", "Completion tokens of an upstream model's chats, as their usage counts them (chats cut short included).", []string{"model"}, nil),
	}
}

func (c *upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.inFlight, c.requests, c.failures, c.alive, c.queued, c.ttft, c.prompt, c.completion} {
		ch <- d
	}
}

func (c *upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.pools {
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(p.Queued()), p.Name())
		cs := p.ChatStats()
		h := cs.TimeToFirstToken
		ch <- prometheus.MustNewConstHistogram(c.ttft, h.Count, h.Sum, h.Buckets, p.Name())
		ch <- prometheus.MustNewConstMetric(c.prompt, prometheus.CounterValue, float64(cs.PromptTokens), p.Name())
		ch <- prometheus.MustNewConstMetric(c.completion, prometheus.CounterValue, float64(cs.CompletionTokens), p.Name())
		for _, st := range p.Stats() {
			healthy := 0.0
			if st.Healthy {
				healthy = 1
			}
			ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(st.InFlight), st.Model, st.Host)
			ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(st.Requests), st.Model, st.Host)
			for _, reason := range upstream.FailureReasons {
				ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(st.FailuresBy[reason]), st.Model, st.Host, reason)
			}
			ch <- prometheus.MustNewConstMetric(c.alive, prometheus.GaugeValue, healthy, st.Model, st.Host)
		}
	}
}

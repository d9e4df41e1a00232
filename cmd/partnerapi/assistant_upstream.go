package main

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream"
)

// upstreamFlag is --assistant-upstream: upstream.Routes, whose parser
// lives beside the pools it configures so that its fuzz target runs in a
// small test binary (here, every package of the server is instrumented and
// the target ran at a few hundred executions a second).
type upstreamFlag = upstream.Routes

// routeUpstreams returns local unchanged when no upstream is configured; else an
// engine routing each configured name to the pool of its replicas, and
// the pools, which the caller closes on shutdown (their probes stop).
func routeUpstreams(f upstreamFlag, local assistant.Engine, opts upstream.PoolOptions) (assistant.Engine, []*upstream.Pool) {
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
		p := upstream.NewPool(name, r.Served, r.Bases, opts)
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

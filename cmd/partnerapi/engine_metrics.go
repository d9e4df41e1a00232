package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/inference/local"
)

// engineCollector exports the embedded engine's schedulers to Prometheus,
// read at each scrape (local.Engine.Stats): what an operator sizing
// --assistant-engine-concurrency or watching memory needs to see, the
// requests in and waiting for the batch and the KV memory in use, kept by
// the prefix cache, and pooled for the next requests, and how long clients
// wait for the first token.
type engineCollector struct {
	engine                                                *local.Engine
	requests, sequences, kvBytes, cachedPrompts, maxBatch *prometheus.Desc
	steps, prefixHits, prefillTokens, decodedTokens       *prometheus.Desc
	ttft                                                  *prometheus.Desc
}

func newEngineCollector(e *local.Engine) *engineCollector {
	model := []string{"model"}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("partnerapi_engine_"+name, help, append(model, labels...), nil)
	}
	return &engineCollector{
		engine:        e,
		requests:      desc("requests", "Requests of the embedded engine by state: active (in the batch), prefilling (prompt joining it), queued (waiting for a slot).", "state"),
		sequences:     desc("sequences", "Sequences in the batch (a request has one per choice)."),
		kvBytes:       desc("kv_bytes", "KV cache memory: active (the batch's sequences), cached (the prefix cache's finished prompts), pooled (released, kept for the next sequences).", "use"),
		cachedPrompts: desc("cached_prompts", "Finished prompts kept for prefix reuse."),
		maxBatch:      desc("max_batch", "Most sequences stepped together since the engine opened."),
		steps:         desc("steps_total", "Batched decode steps run."),
		prefixHits:    desc("prefix_hits_total", "Requests that reused a cached prompt prefix."),
		prefillTokens: desc("prefill_tokens_total", "Prompt tokens run through the model."),
		decodedTokens: desc("decoded_tokens_total", "Tokens sampled (end-of-generation included)."),
		ttft:          desc("time_to_first_token_seconds", "Time from a chat request reaching the engine to its first token: queueing for a slot, rendering the prompt and prefill."),
	}
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.sequences, c.kvBytes, c.cachedPrompts, c.maxBatch, c.steps, c.prefixHits, c.prefillTokens, c.decodedTokens, c.ttft} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, st := range c.engine.Stats() {
		m := st.Model
		gauge(c.requests, float64(st.ActiveRequests), m, "active")
		gauge(c.requests, float64(st.PrefillingRequests), m, "prefilling")
		gauge(c.requests, float64(st.QueuedRequests), m, "queued")
		gauge(c.sequences, float64(st.ActiveSequences), m)
		gauge(c.kvBytes, float64(st.KVBytes), m, "active")
		gauge(c.kvBytes, float64(st.CachedKVBytes), m, "cached")
		gauge(c.kvBytes, float64(st.PooledKVBytes), m, "pooled")
		gauge(c.cachedPrompts, float64(st.CachedPrompts), m)
		gauge(c.maxBatch, float64(st.MaxBatch), m)
		counter(c.steps, st.Steps, m)
		counter(c.prefixHits, st.PrefixHits, m)
		counter(c.prefillTokens, st.PrefillTokens, m)
		counter(c.decodedTokens, st.DecodedTokens, m)
		h := st.TimeToFirstToken
		ch <- prometheus.MustNewConstHistogram(c.ttft, h.Count, h.Sum, h.Buckets, m)
	}
}

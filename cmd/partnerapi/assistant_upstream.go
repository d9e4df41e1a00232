package main

import (
	"fmt"
	"net/url"
	"strings"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream"
)

// upstreamRoute is one --assistant-upstream: the server's base URL and how
// the served model maps onto it.
type upstreamRoute struct {
	base   string
	served upstream.Served
}

// upstreamFlag collects --assistant-upstream NAME=URL[#model=ID&type=TYPE];
// models it names are served by that OpenAI-compatible server, the rest by
// the local engine. The URL fragment (never sent to the server) carries the
// options: the upstream's id for the model when it differs from NAME, and
// type=embedder for an embeddings model (served at /embeddings).
type upstreamFlag map[string]upstreamRoute

func (f *upstreamFlag) String() string {
	var parts []string
	for name, r := range *f {
		parts = append(parts, name+"="+r.base)
	}
	return strings.Join(parts, ",")
}

func (f *upstreamFlag) Set(v string) error {
	name, raw, ok := strings.Cut(v, "=")
	u, err := url.Parse(raw)
	if !ok || name == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("want NAME=URL[#model=ID&type=chat|embedder], got %q", v)
	}
	opts, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return fmt.Errorf("%q: options after # are model=ID&type=chat|embedder: %v", v, err)
	}
	r := upstreamRoute{served: upstream.Served{Remote: opts.Get("model"), Type: opts.Get("type")}}
	for k := range opts {
		if k != "model" && k != "type" {
			return fmt.Errorf("%q: unknown option %q (want model, type)", v, k)
		}
	}
	switch r.served.Type {
	case "", assistant.TypeChat, assistant.TypeEmbedder:
	default:
		return fmt.Errorf("%q: type must be chat or embedder", v)
	}
	u.Fragment, u.RawFragment = "", ""
	r.base = u.String()
	if *f == nil {
		*f = upstreamFlag{}
	}
	(*f)[name] = r
	return nil
}

// route returns local unchanged when no upstream is configured.
func (f upstreamFlag) route(local assistant.Engine) assistant.Engine {
	if len(f) == 0 {
		return local
	}
	m := &assistant.MultiEngine{Default: local, Routes: map[string]assistant.Engine{}}
	for name, r := range f {
		e := upstream.New(r.base, nil)
		e.Serve(name, r.served)
		m.Routes[name] = e
	}
	return m
}

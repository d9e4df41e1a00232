package main

import (
	"fmt"
	"net/url"
	"strings"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream"
)

// upstreamFlag collects --assistant-upstream NAME=URL; models it names are
// served by that OpenAI-compatible server, the rest by the local engine.
type upstreamFlag map[string]string

func (f *upstreamFlag) String() string { return fmt.Sprint(map[string]string(*f)) }

func (f *upstreamFlag) Set(v string) error {
	name, raw, ok := strings.Cut(v, "=")
	if u, err := url.Parse(raw); !ok || name == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("want NAME=URL, got %q", v)
	}
	if *f == nil {
		*f = upstreamFlag{}
	}
	(*f)[name] = raw
	return nil
}

// route returns local unchanged when no upstream is configured.
func (f upstreamFlag) route(local assistant.Engine) assistant.Engine {
	if len(f) == 0 {
		return local
	}
	m := &assistant.MultiEngine{Default: local, Routes: map[string]assistant.Engine{}}
	for name, u := range f {
		m.Routes[name] = upstream.New(u, nil)
	}
	return m
}

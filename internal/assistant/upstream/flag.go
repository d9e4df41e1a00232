package upstream

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"partnerapi/internal/assistant"
)

// Route is one model name given to --assistant-upstream: the base URLs
// of its replicas and how the served model maps onto them.
type Route struct {
	Bases  []string
	Served Served
}

// Routes collects --assistant-upstream NAME=URL[#model=ID&type=TYPE];
// models it names are served by those OpenAI-compatible servers, the rest
// by the local engine. The URL fragment (never sent to the server) carries
// the options: the upstream's id for the model when it differs from NAME,
// and type=embedder for an embeddings model (served at /embeddings). A NAME
// given again adds a replica of it (Pool), which must take the same
// options: one name is one model, whichever server answers.
type Routes map[string]Route

func (f *Routes) String() string {
	var parts []string
	for name, r := range *f {
		for _, base := range r.Bases {
			parts = append(parts, shown(name+"="+base))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (f *Routes) Set(v string) error {
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
	if strings.ContainsAny(name, ":/") {
		// A model's id is NAME:version and a request's model is read up
		// to its first ':', so a NAME with one (Ollama's "llama3:8b") was
		// listed in /models and answered "No such model" under every id;
		// GET /models/{model} takes one path segment, which a '/' would
		// split. The model alias flag refuses both for the same reasons.
		return fmt.Errorf("%q: NAME must hold neither ':' nor '/' (a model id is NAME:version); put the server's id in #model=", shown(v))
	}
	opts, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return fmt.Errorf("%q: options after # are model=ID&type=chat|embedder: %v", shown(v), err)
	}
	served := Served{Remote: opts.Get("model"), Type: opts.Get("type")}
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
		*f = Routes{}
	}
	r, seen := (*f)[name]
	if !seen {
		(*f)[name] = Route{Bases: []string{base}, Served: served}
		return nil
	}
	// The options are compared as they mean: no model= is NAME, no type=
	// is chat.
	if canonical(name, served) != canonical(name, r.Served) {
		return fmt.Errorf("%q: every replica of %s takes the same options, and an earlier one has %s", shown(v), name, optionsOf(r.Served))
	}
	// Metrics and logs name a replica by its host and path, so two of
	// them there would be one series (and fail every scrape).
	for _, b := range r.Bases {
		if Host(b) == Host(base) {
			return fmt.Errorf("%q: %s is already a replica of %s", shown(v), Host(base), name)
		}
	}
	r.Bases = append(r.Bases, base)
	(*f)[name] = r
	return nil
}

// Redact quotes v without its credentials, for the flag package's own
// "invalid value" error (see redactFlagError).
func (f *Routes) Redact(v string) string { return shown(v) }

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
func canonical(name string, s Served) Served {
	if s.Remote == "" {
		s.Remote = name
	}
	if s.Type == "" {
		s.Type = assistant.TypeChat
	}
	return s
}

// optionsOf is s as the URL fragment that gave it.
func optionsOf(s Served) string {
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

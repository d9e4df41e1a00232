// Package modelstore manages the directory of GGUF models the assistant
// serves: it downloads models (resumable, verified by sha256, checked to be
// GGUF, installed atomically), lists them with what their headers say, and
// removes them. It knows nothing about flags or terminals; the command line
// lives in cmd/partnerapi.
package modelstore

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// DefaultHFEndpoint is where hf.co sources resolve unless HF_ENDPOINT (or an
// explicit endpoint) names a mirror.
const DefaultHFEndpoint = "https://huggingface.co"

// Source is a parsed pull source: where to download from and the model name
// the file gets by default.
type Source struct {
	// URL is the resolved download URL.
	URL string
	// Name is the default model name: the file name without ".gguf"; empty
	// when the file name gives none (NameErr says why; --name must be given).
	Name    string
	NameErr error
	// HF reports a Hugging Face source (owner/repo/file resolved against the
	// endpoint); only those requests carry HF_TOKEN.
	HF bool
	// Repo is "owner/repo" for Hugging Face sources.
	Repo string
	// Tag is the quantisation tag of hf.co/OWNER/REPO:TAG. A Hugging Face
	// source without a file (tagged or not) has no URL yet: Pull picks the
	// file from the repository's file list (see resolveHub).
	Tag string

	endpoint *url.URL // of a Hugging Face source
}

// ErrSource wraps every error about an unparseable source.
var ErrSource = errors.New("bad model source")

// hfHosts are the host names that mean "the Hugging Face Hub": their URLs are
// re-resolved against the configured endpoint so that a mirror (HF_ENDPOINT)
// serves them too.
var hfHosts = map[string]bool{"hf.co": true, "huggingface.co": true, "www.huggingface.co": true}

// ParseSource parses one of
//
//	hf.co/OWNER/REPO/FILE.gguf             (also huggingface.co/..., with or without https://)
//	hf.co/OWNER/REPO:FILE.gguf
//	https://huggingface.co/OWNER/REPO/resolve/REV/FILE   (or /blob/REV/, as copied from a browser)
//	https://any.host/path/FILE.gguf        (plain http(s) URLs are downloaded as they are)
//
// Hugging Face sources resolve to ENDPOINT/OWNER/REPO/resolve/REV/FILE, REV
// being main unless the URL names one; endpoint "" means DefaultHFEndpoint.
func ParseSource(src, endpoint string) (Source, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return Source{}, fmt.Errorf("%w: empty source", ErrSource)
	}
	if endpoint == "" {
		endpoint = DefaultHFEndpoint
	}
	ep, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return Source{}, fmt.Errorf("%w: Hugging Face endpoint %q is not an http(s) URL", ErrSource, endpoint)
	}
	rest := src
	scheme := ""
	if s, r, ok := strings.Cut(src, "://"); ok {
		scheme, rest = strings.ToLower(s), r
		if scheme != "http" && scheme != "https" {
			return Source{}, fmt.Errorf("%w: %q: only http(s) URLs and hf.co/OWNER/REPO/FILE.gguf are supported", ErrSource, src)
		}
	}
	host, p, _ := strings.Cut(rest, "/")
	if hfHosts[strings.ToLower(host)] {
		return parseHF(src, p, ep)
	}
	if scheme == "" {
		return Source{}, fmt.Errorf("%w: %q: want hf.co/OWNER/REPO/FILE.gguf or an http(s) URL", ErrSource, src)
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return Source{}, fmt.Errorf("%w: %q is not a valid URL", ErrSource, src)
	}
	if u.User != nil {
		return Source{}, fmt.Errorf("%w: credentials in the URL are not supported (they would end up in logs); use HF_TOKEN", ErrSource)
	}
	u.Fragment = ""
	name, nameErr := nameFromFile(path.Base(u.Path))
	return Source{URL: u.String(), Name: name, NameErr: nameErr}, nil
}

// parseHF parses the path after an hf.co or huggingface.co host.
func parseHF(src, p string, ep *url.URL) (Source, error) {
	p, _, _ = strings.Cut(p, "?")
	p, _, _ = strings.Cut(p, "#")
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, seg := range segs {
		// Browser-copied URLs are escaped; they are unescaped here and
		// escaped once when the URL is built.
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	bad := func(why string) (Source, error) {
		return Source{}, fmt.Errorf("%w: %q: %s (want hf.co/OWNER/REPO/FILE.gguf)", ErrSource, src, why)
	}
	if len(segs) < 2 {
		return bad("no OWNER/REPO")
	}
	owner, repo := segs[0], segs[1]
	rev := "main"
	var file []string
	switch {
	case strings.Contains(repo, ":"):
		var f string
		repo, f, _ = strings.Cut(repo, ":")
		if len(segs) != 2 {
			return bad("a file or tag after ':' must be the last part")
		}
		if !strings.HasSuffix(strings.ToLower(f), ".gguf") {
			// An Ollama-style quantisation tag (":Q4_K_M"): the file is
			// picked from the repository's file list when pulling.
			if !quantTag.MatchString(f) {
				return bad(fmt.Sprintf("%q is neither a .gguf file name nor a quantisation tag like Q4_K_M", f))
			}
			if !validRepoPart(owner) || !validRepoPart(repo) {
				return bad("OWNER and REPO may hold letters, digits, '-', '_' and '.'")
			}
			return Source{HF: true, Repo: owner + "/" + repo, Tag: f, endpoint: ep}, nil
		}
		file = []string{f}
	case len(segs) >= 4 && (segs[2] == "resolve" || segs[2] == "blob"):
		rev, file = segs[3], segs[4:]
	default:
		file = segs[2:]
	}
	if !validRepoPart(owner) || !validRepoPart(repo) {
		return bad("OWNER and REPO may hold letters, digits, '-', '_' and '.'")
	}
	if len(segs) == 2 && len(file) == 0 {
		// hf.co/OWNER/REPO: the repository's only GGUF, or its Q4_K_M.
		return Source{HF: true, Repo: owner + "/" + repo, endpoint: ep}, nil
	}
	if rev == "" || len(file) == 0 {
		return bad("no file")
	}
	for _, s := range file {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\") {
			return bad("empty or relative path segment in the file name")
		}
	}
	name, nameErr := nameFromFile(file[len(file)-1])
	if strings.ContainsAny(rev, "/\\") || rev == "." || rev == ".." {
		return bad("bad revision")
	}
	u := hubURL(ep, append([]string{owner, repo, "resolve", rev}, file...)...)
	return Source{URL: u, Name: name, NameErr: nameErr, HF: true, Repo: owner + "/" + repo, endpoint: ep}, nil
}

// hubURL joins unescaped path segments under the endpoint, escaping each.
func hubURL(ep *url.URL, plain ...string) string {
	escaped := make([]string, len(plain))
	for i, s := range plain {
		escaped[i] = url.PathEscape(s)
	}
	u := *ep
	u.Path = strings.TrimRight(ep.Path, "/") + "/" + strings.Join(plain, "/")
	u.RawPath = strings.TrimRight(ep.EscapedPath(), "/") + "/" + strings.Join(escaped, "/")
	return u.String()
}

var quantTag = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

var repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

func validRepoPart(s string) bool { return repoPart.MatchString(s) && !strings.Contains(s, "..") }

// nameFromFile derives a model name from a downloaded file's name.
func nameFromFile(file string) (string, error) {
	if u, err := url.PathUnescape(file); err == nil {
		file = u
	}
	if !strings.HasSuffix(strings.ToLower(file), ".gguf") {
		return "", fmt.Errorf("%q is not a .gguf file name; pass --name to pull it anyway", file)
	}
	name := file[:len(file)-len(".gguf")]
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("%v; pass --name", err)
	}
	return name, nil
}

var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidateName checks a model name: it becomes a file name in the models
// directory and the model id clients send (NAME or NAME:VERSION), so it may
// hold no path separators and no ':'.
func ValidateName(name string) error {
	if !modelName.MatchString(name) || strings.HasSuffix(strings.ToLower(name), ".gguf") {
		return fmt.Errorf("model name %q: want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

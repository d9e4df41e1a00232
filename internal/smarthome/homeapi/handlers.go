package homeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/web"
)

type handlers struct {
	svc *smarthome.Service
	opt Options
	cmd smarthome.Commander // nil: no MQTT gate
	log *slog.Logger

	// snap is the catalog rendered for the wire; it is replaced, never
	// changed, when the service hands out a different catalog.
	snap atomic.Pointer[rendered]
}

// rendered holds the catalog responses encoded once per catalog version:
// agents poll these endpoints and the bytes only change with the version.
// Header values are prepared too, so serving one is a map lookup and a
// write.
type rendered struct {
	catalog *smarthome.Catalog
	etag    []string
	// lastModified is the catalog version's time in HTTP's format, nil
	// when the store did not say.
	lastModified []string
	categories   renderedBody
	features     map[string]renderedBody
	models       renderedBody
}

type renderedBody struct {
	body   []byte
	length []string // Content-Length
}

func newBody(b []byte) renderedBody {
	return renderedBody{body: b, length: []string{strconv.Itoa(len(b))}}
}

// Header values shared by every response; net/http only reads them.
var (
	contentTypeJSON = []string{"application/json; charset=utf-8"}
	cacheNoCache    = []string{"no-cache"}
)

func (h *handlers) auth(kind string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.svc.AuthenticateBasic(r.Context(), kind, r.Header.Get("Authorization")); err != nil {
			h.domainError(w, r, err)
			return
		}
		next(w, r)
	}
}

// catalogTag names one content of the catalog: its version and, past the
// built-in seed (version 1, the same content wherever this build serves
// it), the second that version was made. The version alone does not: a
// restored backup, or a data directory made anew, counts its versions again
// from where it stands, and its next change would take the tag the lost
// timeline gave other content, which an agent holding that tag would keep
// (304) without ever seeing the new one.
func catalogTag(c *smarthome.Catalog) string {
	tag := "catalog-" + strconv.FormatInt(c.Version, 10)
	if c.Version > 1 && !c.Updated.IsZero() {
		tag += "." + strconv.FormatInt(c.Updated.Unix(), 10)
	}
	return tag
}

func (h *handlers) render(r *http.Request) (*rendered, error) {
	c, err := h.svc.Catalog(r.Context())
	if err != nil {
		return nil, err
	}
	if s := h.snap.Load(); s != nil && s.catalog == c {
		return s, nil
	}
	s := &rendered{catalog: c, etag: []string{`"` + catalogTag(c) + h.opt.variant() + `"`}, features: map[string]renderedBody{}}
	if !c.Updated.IsZero() {
		s.lastModified = []string{c.Updated.UTC().Format(http.TimeFormat)}
	}
	names := c.CategoryNames()
	b, err := encode(map[string]any{"categories": names})
	if err != nil {
		return nil, err
	}
	s.categories = newBody(b)
	for _, name := range names {
		fs, err := c.CategoryFeatures(name)
		if err != nil {
			return nil, err
		}
		var v any = fs
		if h.opt.OmitFalseRequired {
			v = omitFalse(fs)
		}
		if b, err = encode(map[string]any{"features": v}); err != nil {
			return nil, err
		}
		s.features[name] = newBody(b)
	}
	if s.models, err = h.renderModels(c.Models); err != nil {
		return nil, err
	}
	// Concurrent renders of one catalog produce equal bytes; a newer catalog
	// must not be replaced by an older one.
	for {
		old := h.snap.Load()
		if old != nil && old.catalog.Version > c.Version {
			return s, nil
		}
		if h.snap.CompareAndSwap(old, s) {
			return s, nil
		}
	}
}

// renderModels encodes a list of models as GET /v1/mqtt-gate/models
// answers it.
func (h *handlers) renderModels(ms []smarthome.Model) (renderedBody, error) {
	models := make([]smarthome.Model, 0, len(ms))
	for _, m := range ms {
		if h.opt.HideAllowedValues {
			m.AllowedValues = nil
		}
		models = append(models, m)
	}
	b, err := encode(map[string]any{"models": models})
	return newBody(b), err
}

func omitFalse(fs []smarthome.FeatureRef) any {
	type ref struct {
		Name     string `json:"name"`
		DataType string `json:"data_type"`
		Required bool   `json:"required,omitempty"`
	}
	out := make([]ref, len(fs))
	for i, f := range fs {
		out[i] = ref(f)
	}
	return out
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// serveCatalog writes a catalog body with its ETag and Last-Modified
// (reference §8.5), or 304 when the client already holds this version.
//
// If-Modified-Since is not honoured: the ETag names the wire-format
// switches as well as the version, but the date cannot, so a client that
// moves to a server with other switches on the same catalog would be told
// its copy is current. A client that sends it gets the body, which is
// always correct. A 304 carries the ETag alone, as RFC 9110 §15.4.5
// advises when there is one.
func serveCatalog(w http.ResponseWriter, r *http.Request, s *rendered, b renderedBody) {
	hdr := w.Header()
	hdr["Etag"] = s.etag
	hdr["Cache-Control"] = cacheNoCache
	if inm := r.Header.Get("If-None-Match"); inm != "" && matchETag(inm, s.etag[0]) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if s.lastModified != nil {
		hdr["Last-Modified"] = s.lastModified
	}
	hdr["Content-Type"] = contentTypeJSON
	hdr["Content-Length"] = b.length
	_, _ = w.Write(b.body)
}

// matchETag is the weak comparison If-None-Match asks for (RFC 9110
// §13.1.2): "*" alone, or a list of entity-tags, empty elements allowed.
// An entity-tag may hold commas, so the list is scanned tag by tag rather
// than split on them. A value that is not a valid list matches nothing:
// serving the body is always correct, a 304 only when we understood.
func matchETag(header, etag string) bool {
	if strings.Trim(header, " \t") == "*" {
		return true
	}
	opaque := strings.TrimPrefix(etag, "W/")
	matched := false
	i := 0
	for {
		for i < len(header) && (header[i] == ' ' || header[i] == '\t' || header[i] == ',') {
			i++
		}
		if i == len(header) {
			return matched
		}
		if strings.HasPrefix(header[i:], "W/") {
			i += 2
		}
		if i == len(header) || header[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(header) && header[end] != '"' {
			if c := header[end]; c != 0x21 && (c < 0x23 || c > 0x7e) && c < 0x80 {
				return false
			}
			end++
		}
		if end == len(header) {
			return false
		}
		if header[i:end+1] == opaque {
			matched = true
		}
		// A tag ends the list or is followed by a comma, whitespace
		// allowed before it.
		for i = end + 1; i < len(header) && (header[i] == ' ' || header[i] == '\t'); i++ {
		}
		if i < len(header) && header[i] != ',' {
			return false
		}
	}
}

func (h *handlers) categories(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	serveCatalog(w, r, s, s.categories)
}

func (h *handlers) features(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	body, ok := s.features[r.PathValue("category")]
	if !ok {
		h.domainError(w, r, &smarthome.UnknownCategoryError{Category: r.PathValue("category")})
		return
	}
	serveCatalog(w, r, s, body)
}

func (h *handlers) models(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	categories, filtered, err := categoryFilter(r)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	if !filtered {
		serveCatalog(w, r, s, s.models)
		return
	}
	ms, err := s.catalog.ModelsOf(categories)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	body, err := h.renderModels(ms)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	// The catalog version's ETag fits a filtered list too: caches key
	// their copies by the whole URL, query included, and the list changes
	// only with the version.
	serveCatalog(w, r, s, body)
}

// categoryFilter reads the models listing's ?category= (the extension of
// reference §8.7): several categories as the parameter repeated
// (?category=light&category=socket, OpenAPI's form style) or as one
// comma-separated value (?category=light,socket), which come to the same.
// Without the parameter the listing is not filtered; a name left empty
// (?category= or light,,socket) is the client's mistake, 400, not a
// request for everything. Every other query parameter stays ignored
// (§8.7).
func categoryFilter(r *http.Request) (categories []string, filtered bool, err error) {
	values, filtered, err := queryValues(r, "category")
	if err != nil {
		return nil, true, err
	}
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			if n == "" {
				return nil, true, &smarthome.InvalidError{Details: []string{
					"category must name a category: ?category=light, repeated or comma-separated for several"}}
			}
			categories = append(categories, n)
		}
	}
	return categories, filtered, nil
}

// readBody reads a JSON request body within the platform's limit. A body
// under a Content-Type other than JSON is refused (400) unread: agents and
// the provider's tools send application/json (reference §2, which also
// says to ignore the header on GET, where there is no body), and a body of
// another declared type is not to be read as JSON and acted on. No
// Content-Type at all is read as JSON.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeError(w, http.StatusBadRequest, "Bad request", "Content-Type must be application/json")
			return nil, false
		}
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if web.IsBodyTooLarge(err) {
			writeError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		} else {
			writeError(w, http.StatusBadRequest, "Bad request", "could not read the body")
		}
		return nil, false
	}
	// Not UTF-8 (RFC 8259 §8.1): encoding/json would take each bad byte as
	// U+FFFD, and a model or an agent would be stored, or a device id
	// validated, under a name the client never sent.
	if !utf8.Valid(b) {
		writeError(w, http.StatusBadRequest, "Bad request", "the body is not UTF-8")
		return nil, false
	}
	return b, true
}

func (h *handlers) validate(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	c, err := h.svc.Catalog(r.Context())
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	// A status names its category in the query alone; the first one
	// counts, as it did through url.Values.Get.
	categories, _, err := queryValues(r, "category")
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	category := ""
	if len(categories) > 0 {
		category = categories[0]
	}
	rep, err := c.Validate(body, category)
	if err != nil {
		h.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

package homeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/web"
)

type handlers struct {
	svc *smarthome.Service
	opt Options

	mu   sync.Mutex
	snap *rendered
}

// rendered holds the catalog responses encoded once per catalog version:
// agents poll these endpoints and the bytes only change with the version.
type rendered struct {
	version    int64
	etag       string
	categories []byte
	features   map[string][]byte
	models     []byte
}

func (h *handlers) auth(kind string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		login, pw, ok := r.BasicAuth()
		if !ok {
			domainError(w, r, smarthome.ErrUnauthorized)
			return
		}
		if err := h.svc.Authenticate(r.Context(), kind, login, pw); err != nil {
			domainError(w, r, err)
			return
		}
		next(w, r)
	}
}

func (h *handlers) render(r *http.Request) (*rendered, error) {
	c, err := h.svc.Catalog(r.Context())
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	s := h.snap
	h.mu.Unlock()
	if s != nil && s.version == c.Version {
		return s, nil
	}
	s = &rendered{version: c.Version, etag: `"catalog-` + strconv.FormatInt(c.Version, 10) + `"`, features: map[string][]byte{}}
	hidden := map[string]bool{}
	for _, n := range h.opt.HideCategories {
		hidden[n] = true
	}
	names := []string{}
	for _, n := range c.CategoryNames() {
		if !hidden[n] {
			names = append(names, n)
		}
	}
	if s.categories, err = encode(map[string]any{"categories": names}); err != nil {
		return nil, err
	}
	for _, name := range names {
		fs, err := c.CategoryFeatures(name)
		if err != nil {
			return nil, err
		}
		var v any = fs
		if h.opt.OmitFalseRequired {
			v = omitFalse(fs)
		}
		if s.features[name], err = encode(map[string]any{"features": v}); err != nil {
			return nil, err
		}
	}
	models := []smarthome.Model{}
	for _, m := range c.Models {
		if hidden[m.Category] {
			continue
		}
		if h.opt.HideAllowedValues {
			m.AllowedValues = nil
		}
		models = append(models, m)
	}
	if s.models, err = encode(map[string]any{"models": models}); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.snap == nil || h.snap.version <= s.version {
		h.snap = s
	}
	h.mu.Unlock()
	return s, nil
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

// serveCatalog writes a catalog body with its ETag, or 304 when the client
// already holds this version.
func serveCatalog(w http.ResponseWriter, r *http.Request, etag string, body []byte) {
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if matchETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// matchETag is the weak comparison If-None-Match asks for (RFC 9110 §13.1.2).
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

func (h *handlers) categories(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		domainError(w, r, err)
		return
	}
	serveCatalog(w, r, s.etag, s.categories)
}

func (h *handlers) features(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		domainError(w, r, err)
		return
	}
	body, ok := s.features[r.PathValue("category")]
	if !ok {
		domainError(w, r, smarthome.ErrNotFound)
		return
	}
	serveCatalog(w, r, s.etag, body)
}

func (h *handlers) models(w http.ResponseWriter, r *http.Request) {
	s, err := h.render(r)
	if err != nil {
		domainError(w, r, err)
		return
	}
	serveCatalog(w, r, s.etag, s.models)
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if web.IsBodyTooLarge(err) {
			writeError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		} else {
			writeError(w, http.StatusBadRequest, "Bad request", "could not read the body")
		}
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
		domainError(w, r, err)
		return
	}
	rep, err := c.Validate(body, r.URL.Query().Get("category"))
	if err != nil {
		domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (h *handlers) getModel(w http.ResponseWriter, r *http.Request) {
	c, err := h.svc.Catalog(r.Context())
	if err != nil {
		domainError(w, r, err)
		return
	}
	for _, m := range c.Models {
		if m.ID == r.PathValue("id") {
			w.Header().Set("X-Catalog-Version", strconv.FormatInt(c.Version, 10))
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	domainError(w, r, smarthome.ErrNotFound)
}

func (h *handlers) putModel(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var m smarthome.Model
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		domainError(w, r, &smarthome.InvalidError{Details: []string{"body is not a model: " + err.Error()}})
		return
	}
	if m.ID == "" {
		m.ID = r.PathValue("id")
	}
	if m.ID != r.PathValue("id") {
		domainError(w, r, &smarthome.InvalidError{Details: []string{"id in the body differs from the path"}})
		return
	}
	created, v, err := h.svc.PutModel(r.Context(), m)
	if err != nil {
		domainError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
	writeJSON(w, status, m)
}

func (h *handlers) deleteModel(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.DeleteModel(r.Context(), r.PathValue("id"))
	if err != nil {
		domainError(w, r, err)
		return
	}
	w.Header().Set("X-Catalog-Version", strconv.FormatInt(v, 10))
	w.WriteHeader(http.StatusNoContent)
}

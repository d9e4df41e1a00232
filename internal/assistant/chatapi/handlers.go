package chatapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

type principalKey struct{}

// auth requires a bearer token on every /api/v1 call.
func (s *server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.svc.Authenticate(r.Context(), assistant.BearerToken(r.Header.Get("Authorization")))
		if err != nil {
			s.domainError(w, r, err)
			return
		}
		// Normalised here, for the upload that binds a file to it and
		// the download that must match it alike.
		p.HeaderClientID = assistant.NormalizeClientID(r.Header.Get("X-Client-ID"))
		next(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

func principal(r *http.Request) assistant.Principal {
	p, _ := r.Context().Value(principalKey{}).(assistant.Principal)
	return p
}

// noStore is what the provider's token endpoint sends (reference §1).
func noStore(h http.Header) {
	h.Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "0")
}

func (s *server) oauth(w http.ResponseWriter, r *http.Request) {
	noStore(w.Header())
	if err := r.ParseForm(); err != nil {
		if web.IsBodyTooLarge(err) {
			platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
			return
		}
		s.tokenError(w, r, assistant.ErrScopeInvalid)
		return
	}
	// A scope sent more than once names no one scope (RFC 6749 §3.1:
	// a parameter is sent once at most), and PostForm.Get would take the
	// first, a token for a scope the request did not single out. Its
	// values joined by a comma, which no scope name holds and the scope
	// parser does not trim as white space (a space would let
	// "scope=ASSISTANT_API_CORP&scope=" through), are no scope, so it is
	// refused as garbled (code 1) where a garbled scope is: after RqUID
	// and the Authorization header, before the credentials are checked.
	scope := strings.Join(r.PostForm["scope"], ",")
	tok, exp, err := s.svc.IssueToken(r.Context(), r.Header.Get("Authorization"), r.Header.Get("RqUID"), scope, web.ClientIP(r))
	if err != nil {
		s.tokenError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		AccessToken string `json:"access_token"`
		ExpiresAt   int64  `json:"expires_at"`
	}{tok, exp.UnixMilli()})
}

// legacyToken serves the SDKs' old password flow (reference §1), which the
// npm client takes when it is given user and password instead of
// credentials: POST {base_url}/token with Basic user:password and no body,
// read as {"tok", "exp"} with exp in Unix milliseconds. The user is the
// client id and the password its secret.
func (s *server) legacyToken(w http.ResponseWriter, r *http.Request) {
	noStore(w.Header())
	tok, exp, err := s.svc.IssueLegacyToken(r.Context(), r.Header.Get("Authorization"), web.ClientIP(r))
	if err != nil {
		s.legacyTokenError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Tok string `json:"tok"`
		Exp int64  `json:"exp"`
	}{tok, exp.UnixMilli()})
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	OwnedBy string `json:"owned_by"`
	Type    string `json:"type"`
}

func (s *server) wireModel(m assistant.ModelInfo) wireModel {
	return wireModel{ID: s.svc.ModelID(m), Object: "model", OwnedBy: m.OwnedBy, Type: m.Type}
}

func (s *server) models(w http.ResponseWriter, r *http.Request) {
	ms, err := s.svc.Models(r.Context())
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	out := struct {
		Object string      `json:"object"`
		Data   []wireModel `json:"data"`
	}{"list", []wireModel{}}
	for _, m := range ms {
		out.Data = append(out.Data, s.wireModel(m))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) model(w http.ResponseWriter, r *http.Request) {
	m, err := s.svc.ResolveModel(r.Context(), r.PathValue("model"))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.wireModel(m))
}

type wireTokens struct {
	Object     string `json:"object"`
	Tokens     int    `json:"tokens"`
	Characters int    `json:"characters"`
}

func (s *server) tokensCount(w http.ResponseWriter, r *http.Request) {
	req, err := decodeTokensCount(r.Body)
	if err != nil {
		s.bodyError(w, r, err)
		return
	}
	counts, err := s.svc.CountTokens(r.Context(), req.Model, *req.Input)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	out := make([]wireTokens, 0, len(counts))
	for _, c := range counts {
		out = append(out, wireTokens{"tokens", c.Tokens, c.Characters})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) balance(w http.ResponseWriter, r *http.Request) {
	bs, err := s.svc.Balance(r.Context(), principal(r))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	type item struct {
		Usage string `json:"usage"`
		Value int64  `json:"value"`
	}
	out := struct {
		Balance []item `json:"balance"`
	}{[]item{}}
	for _, b := range bs {
		out.Balance = append(out.Balance, item{b.Model, b.Tokens})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errBodyTooLarge) {
		platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
		return
	}
	s.domainError(w, r, err)
}

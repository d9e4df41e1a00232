package bankapi

import (
	"context"
	"net/http"
	"strings"

	"partnerapi/internal/banking"
	"partnerapi/internal/bearer"
)

type principalKey struct{}

// principalFrom returns the principal requireScope put in the context.
func principalFrom(ctx context.Context) banking.Principal {
	if p, ok := ctx.Value(principalKey{}).(*banking.Principal); ok {
		return *p
	}
	return banking.Principal{}
}

// principalContext is context.WithValue(parent, principalKey{}, &p) in one
// allocation: WithValue would allocate its context and box the principal
// apart, on every authenticated call.
type principalContext struct {
	context.Context
	p banking.Principal
}

func (c *principalContext) Value(key any) any {
	if key == (principalKey{}) {
		return &c.p
	}
	return c.Context.Value(key)
}

// bearerToken takes the token from Authorization; the reference's payment
// examples send the bare token and the card examples "Bearer <token>", so
// both are accepted. Only SP and HTAB are trimmed: they are the only white
// space RFC 9110 §5.6.3 allows around a field value, and RFC 6750 §2.1
// puts nothing else between the scheme and the token. strings.TrimSpace
// would also drop Unicode spaces (U+00A0, U+0085, U+2003, …), so a token
// with one of them appended would authenticate as the token without it.
// A token that is not RFC 6750's b64token afterwards reads as no token,
// which requireScope answers with the 401 envelope.
func bearerToken(r *http.Request) string {
	tok, _ := bearer.Parse(r.Header.Get("Authorization"), true)
	return tok
}

// bearerChallenge is the WWW-Authenticate of the API's 401s. The
// reference gives their body alone (UNAUTHORIZED, §13); the header is what
// HTTP asks of any 401 (RFC 9110 §11.6.1) in the scheme the API takes
// (RFC 6750 §3). Its error codes are RFC 6750's and its description is
// ASCII, as §3 requires, so the envelope's Russian message stays in the
// body alone.
const bearerChallenge = `Bearer realm="banking"`

// setChallenge sets the challenge of a 401 for r (RFC 6750 §3.1):
// error="invalid_request" when the Authorization value is a malformed
// bearer credential, bare when it holds none (or another scheme's), which
// the RFC says should carry no error code, and error="invalid_token" when
// a well-formed token was refused as unknown, revoked or expired.
func setChallenge(w http.ResponseWriter, r *http.Request) {
	tok, malformed := bearer.Parse(r.Header.Get("Authorization"), true)
	switch {
	case malformed:
		w.Header().Set("WWW-Authenticate", bearerChallenge+`, error="invalid_request", error_description="malformed bearer token"`)
	case tok == "":
		w.Header().Set("WWW-Authenticate", bearerChallenge)
	default:
		w.Header().Set("WWW-Authenticate", bearerChallenge+`, error="invalid_token"`)
	}
}

// setScopeChallenge sets the challenge of a 403 for a token without the
// operation's scope (RFC 6750 §3.1, insufficient_scope), so that an OAuth
// client learns from the header, as from the envelope's message, that a new
// grant is what it needs, not a new token. The scope attribute names the
// scope to ask for when the operation takes one; several alternatives would
// read as all of them needed (the attribute is a list, §3), so then it is
// left out.
func setScopeChallenge(w http.ResponseWriter, scopes []string) {
	c := bearerChallenge + `, error="insufficient_scope"`
	if len(scopes) == 1 {
		c += `, scope="` + scopes[0] + `"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

// requireScope authenticates the request before anything else happens and
// lets it through only with one of scopes: no, unknown, revoked or expired
// token → 401 UNAUTHORIZED; a token without the scope → 403
// ACTION_ACCESS_EXCEPTION. Handlers read the principal with principalFrom and
// touch only its organisation's data.
func (s *server) requireScope(h http.HandlerFunc, scopes ...string) http.HandlerFunc {
	return s.authenticated(func(w http.ResponseWriter, r *http.Request, p banking.Principal, _ string) {
		h(w, r.WithContext(&principalContext{Context: r.Context(), p: p}))
	}, scopes...)
}

// principalHandler is a handler given the authenticated principal as an
// argument: the payment routes, the hot ones, take it so, which spares
// each call a copy of the request and a context to carry it.
type principalHandler func(w http.ResponseWriter, r *http.Request, p banking.Principal)

// authenticated is requireScope handing h the principal and the token.
func (s *server) authenticated(h func(w http.ResponseWriter, r *http.Request, p banking.Principal, token string), scopes ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := bearerToken(r)
		if token == "" || s.auth == nil {
			setChallenge(w, r)
			writeError(w, r, s.log, banking.Errorf(banking.KindUnauthorized, "Требуется авторизация"))
			return
		}
		p, err := s.auth.Authenticate(r.Context(), token)
		if err != nil {
			// Only a refusal of the token is a 401 with a challenge; an
			// outage of the token store is the envelope's 503 without one.
			if banking.KindOf(err) == banking.KindUnauthorized {
				setChallenge(w, r)
			}
			writeError(w, r, s.log, err)
			return
		}
		if !p.HasAny(scopes...) {
			setScopeChallenge(w, scopes)
			writeError(w, r, s.log, banking.Errorf(banking.KindForbidden, "Недостаточно прав доступа: нужен scope %s", strings.Join(scopes, " или ")))
			return
		}
		h(w, r, p, token)
	}
}

// gated is authenticated with the domain's Gate between the checks and
// h: a request passes authentication and the scope first, so that an
// anonymous flood spends no partner's budget and a 401 or 403 stays what
// it is during maintenance, and then the maintenance switch (503) and the
// rate limit of op for its token (429), before h reads or writes
// anything: a 503 or 429 is the same whatever the request names, so it
// tells nothing of another organisation's data. Every business route of
// the API is gated with the one Gate its services share (banking.Gate).
// gate reads the service's Gate at each call, not once at routing, so a
// Gate set on a service after NewServer holds as well.
func (s *server) gated(gate func() *banking.Gate, op string, h principalHandler, scopes ...string) http.HandlerFunc {
	return s.authenticated(func(w http.ResponseWriter, r *http.Request, p banking.Principal, token string) {
		if err := gate().Check(token, op); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		h(w, r, p)
	}, scopes...)
}

// gatedScope is gated for a handler that reads the principal with
// principalFrom, as requireScope is for authenticated.
func (s *server) gatedScope(gate func() *banking.Gate, op string, h http.HandlerFunc, scopes ...string) http.HandlerFunc {
	return s.gated(gate, op, func(w http.ResponseWriter, r *http.Request, p banking.Principal) {
		h(w, r.WithContext(&principalContext{Context: r.Context(), p: p}))
	}, scopes...)
}

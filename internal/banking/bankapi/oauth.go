package bankapi

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/basicauth"
	"partnerapi/internal/jsonmsg"
	"partnerapi/internal/web"
)

// AuthorizePaths are the login form's paths: a person's browser opens them,
// and the provider serves them without asking for a client certificate
// (web.TLSFiles.BrowserPaths).
var AuthorizePaths = []string{"/ic/sso/api/v2/oauth/authorize", "/ic/sbbid/api/v1/oauth/authorize", "/ic/sbbid/api/v2/oauth/authorize"}

// OAuth paths (reference §3); the Node SDK uses the un-versioned token
// path and clients use both v1 and v2 of revoke and user-info. A client
// configured with an OAuth version N (open-condo-software/condo's
// oauthVersion) asks for authorization at the newer
// /ic/sbbid/api/vN/oauth/authorize and for tokens, user-info and revocation
// at /ic/sso/api/vN/oauth/..., so each endpoint is served under v1 and v2,
// the versions the provider's paths show, besides the older /ic/sso
// authorize.
func (s *server) addOAuthRoutes(mux *web.Mux) {
	for _, p := range AuthorizePaths {
		// The login form posts back to the path it was shown at.
		mux.HandleFunc("GET", p, s.authorizePage)
		mux.HandleFunc("POST", p, s.authorizeSubmit)
	}
	for _, p := range []string{"/ic/sso/api/v1/oauth/token", "/ic/sso/api/v2/oauth/token", "/ic/sso/api/oauth/token"} {
		mux.HandleFunc("POST", p, s.token)
	}
	for _, p := range []string{"/ic/sso/api/v1/oauth/revoke", "/ic/sso/api/v2/oauth/revoke"} {
		mux.HandleFunc("POST", p, s.revoke)
	}
	for _, p := range []string{"/ic/sso/api/v1/oauth/user-info", "/ic/sso/api/v2/oauth/user-info"} {
		mux.HandleFunc("GET", p, s.requireScope(s.userInfo, banking.ScopeOpenID))
	}
	mux.HandleFunc("POST", "/ic/sso/api/v1/change-client-secret", s.changeClientSecret)
}

func authorizeRequest(v url.Values) banking.AuthorizeRequest {
	return banking.AuthorizeRequest{ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"),
		RedirectURI: v.Get("redirect_uri"), Scope: v.Get("scope"), State: v.Get("state"), Nonce: v.Get("nonce"),
		CodeChallenge: v.Get("code_challenge"), CodeChallengeMethod: v.Get("code_challenge_method")}
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="ru"><head><meta charset="utf-8"><title>Вход — {{.App}}</title></head>
<body>
<h1>Вход в банк</h1>
<p>Приложение <b>{{.App}}</b> запрашивает доступ: {{range .Scopes}}<code>{{.}}</code> {{end}}</p>
{{if .Error}}<p role="alert">{{.Error}}</p>{{end}}
<form method="post">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<label>Логин <input name="login" autocomplete="username"></label>
<label>Пароль <input name="password" type="password" autocomplete="current-password"></label>
<button name="consent" value="allow">Разрешить</button>
<button name="consent" value="deny">Отказать</button>
</form>
</body></html>
`))

func (s *server) renderLogin(w http.ResponseWriter, req banking.AuthorizeRequest, app banking.PartnerApp, msg string) {
	hidden := map[string]string{"response_type": req.ResponseType, "client_id": req.ClientID,
		"redirect_uri": req.RedirectURI, "scope": req.Scope, "state": req.State, "nonce": req.Nonce,
		"code_challenge": req.CodeChallenge, "code_challenge_method": req.CodeChallengeMethod}
	name := app.Name
	if name == "" {
		name = app.ClientID
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page carries a form that posts credentials: never frame it.
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_ = loginPage.Execute(w, map[string]any{"App": name, "Scopes": banking.ParseScopes(req.Scope), "Error": msg, "Hidden": hidden})
}

// authorizePage is GET authorize: validate, then show login + consent.
func (s *server) authorizePage(w http.ResponseWriter, r *http.Request) {
	id := s.identityOr503(w, r)
	if id == nil {
		return
	}
	q := r.URL.Query()
	if name, ok := repeatedParam(q); ok {
		s.writeOAuthError(w, r, errRepeatedParam(name))
		return
	}
	req := authorizeRequest(q)
	app, err := id.CheckAuthorize(r.Context(), req)
	if err != nil {
		s.authorizeError(w, r, req, err)
		return
	}
	s.renderLogin(w, req, app, "")
}

// authorizeSubmit is the form post: check the password and consent, then
// redirect to the registered redirect_uri with a one-time code.
func (s *server) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.oauthFormIn(w, r, func(r *http.Request) url.Values { return r.PostForm })
	if !ok {
		return
	}
	req := authorizeRequest(r.PostForm)
	app, err := id.CheckAuthorize(r.Context(), req)
	if err != nil {
		s.authorizeError(w, r, req, err)
		return
	}
	target, _ := url.Parse(req.RedirectURI)
	q := target.Query()
	if req.State != "" {
		q.Set("state", req.State)
	}
	if r.PostForm.Get("consent") != "allow" {
		q.Set("error", "access_denied")
		target.RawQuery = q.Encode()
		http.Redirect(w, r, target.String(), http.StatusFound)
		return
	}
	user, err := id.Login(r.Context(), r.PostForm.Get("login"), r.PostForm.Get("password"), remoteIP(r))
	if err != nil {
		var oe *banking.OAuthError
		if errors.As(err, &oe) {
			s.renderLogin(w, req, app, oe.Description)
			return
		}
		s.writeOAuthError(w, r, err)
		return
	}
	code, err := id.IssueCode(r.Context(), req, user)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	q.Set("code", code)
	target.RawQuery = q.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// authorizeError answers a refused authorize request. An error found
// after the client and its redirect_uri were checked goes back to the
// client at that redirect_uri with the request's state (RFC 6749
// §4.1.2.1), so the partner learns why and the user is not left on an
// error page; any other is answered here, never redirecting to a URI the
// app has not registered.
func (s *server) authorizeError(w http.ResponseWriter, r *http.Request, req banking.AuthorizeRequest, err error) {
	var oe *banking.OAuthError
	if !errors.As(err, &oe) || !oe.Redirect {
		s.writeOAuthError(w, r, err)
		return
	}
	target, perr := url.Parse(req.RedirectURI)
	if perr != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	q := target.Query()
	q.Set("error", oe.Code)
	q.Set("error_description", oe.Description)
	if req.State != "" {
		q.Set("state", req.State)
	}
	target.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// remoteIP is the address the login throttle counts failures by: the
// client's address without a port, since a client opens a new port for
// every connection. That is the connection's peer, unless serve was told
// (--trusted-proxies) that the peer is a reverse proxy of ours, and then
// the address that proxy forwarded (web.ClientIP): keyed on the proxy's
// address, every user behind it would share one count, and five wrong
// passwords from anyone would lock a login out for all of them.
// Forwarding headers from any other peer are not read, since a client
// could write them to get a fresh count for each guess.
func remoteIP(r *http.Request) string {
	return web.ClientIP(r)
}

// clientCredentials returns the client_id and client_secret a request to
// the token, revoke or change-client-secret endpoint authenticates with:
// the form's (client_secret_post, what the provider's clients send,
// reference §3) or the Authorization header's Basic credentials
// (client_secret_basic, which RFC 6749 §2.3.1 says the server MUST take,
// and which the Basic challenge of an invalid_client 401 invites). Each
// half of the Basic pair is form-urlencoded before Base64 (§2.3.1), so it
// is decoded here. A header of another scheme is no client
// authentication and is ignored, as it always was, so a client whose HTTP
// stack adds one by habit keeps working with its form credentials.
//
// A request must not authenticate twice (§2.3): Basic credentials with a
// client_secret in the form, or with a client_id in the form that names
// another client, are 400 invalid_request, so that no one component reads
// one client and another a different one. Basic credentials that do not
// decode are a failed authentication through the header, 401
// invalid_client with the Basic challenge (§5.2).
func clientCredentials(r *http.Request, f url.Values) (clientID, secret string, err error) {
	user, pass, ok := basicauth.Parse(r.Header.Get("Authorization"))
	if !ok {
		if scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "Basic") {
			return "", "", &banking.OAuthError{Code: "invalid_client", Description: "the Basic credentials do not decode"}
		}
		return f.Get("client_id"), f.Get("client_secret"), nil
	}
	clientID, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	if err1 != nil || err2 != nil {
		return "", "", &banking.OAuthError{Code: "invalid_client", Description: "the Basic credentials do not decode"}
	}
	if f.Has("client_secret") || (f.Get("client_id") != "" && f.Get("client_id") != clientID) {
		return "", "", &banking.OAuthError{Code: "invalid_request",
			Description: "the client authenticates either with the Authorization header or with client_id and client_secret in the form, not both"}
	}
	return clientID, secret, nil
}

// token is the token endpoint: authorization_code and refresh_token grants
// with client_secret_post or client_secret_basic.
func (s *server) token(w http.ResponseWriter, r *http.Request) {
	id, ok := s.oauthForm(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	clientID, secret, err := clientCredentials(r, f)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	app, err := id.AuthenticateClient(r.Context(), clientID, secret)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	var pair banking.TokenPair
	// A missing parameter is invalid_request (RFC 6749 §5.2), not an
	// unsupported grant type or an unknown code or refresh token, so that
	// the client learns its request, not its grant, is at fault.
	switch grant := f.Get("grant_type"); {
	case grant == "":
		err = &banking.OAuthError{Code: "invalid_request", Description: "grant_type is required"}
	case grant == "authorization_code" && f.Get("code") == "":
		err = &banking.OAuthError{Code: "invalid_request", Description: "code is required"}
	case grant == "refresh_token" && f.Get("refresh_token") == "":
		err = &banking.OAuthError{Code: "invalid_request", Description: "refresh_token is required"}
	case grant == "authorization_code":
		pair, err = id.ExchangeCode(r.Context(), app.ClientID, f.Get("code"), f.Get("redirect_uri"), f.Get("code_verifier"))
	case grant == "refresh_token":
		pair, err = id.Refresh(r.Context(), app.ClientID, f.Get("refresh_token"), f.Get("scope"))
	default:
		err = &banking.OAuthError{Code: "unsupported_grant_type", Description: "grant_type must be authorization_code or refresh_token"}
	}
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	noStore(w)
	writeJSON(w, http.StatusOK, pair)
}

// noStore marks an answer about tokens or credentials, or an error of the
// endpoints that hand them out, as never to be cached: RFC 6749 §5.1 asks
// for both headers, Pragma for the HTTP/1.0 caches that do not read
// Cache-Control.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

// revoke is RFC 7009: 200 whether or not the token existed.
func (s *server) revoke(w http.ResponseWriter, r *http.Request) {
	id, ok := s.oauthForm(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	clientID, secret, err := clientCredentials(r, f)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	app, err := id.AuthenticateClient(r.Context(), clientID, secret)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	if f.Get("token") == "" {
		s.writeOAuthError(w, r, &banking.OAuthError{Code: "invalid_request", Description: "token is required"})
		return
	}
	if err := id.Revoke(r.Context(), app.ClientID, f.Get("token")); err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// userInfo returns the claims of the token's user and organisation.
func (s *server) userInfo(w http.ResponseWriter, r *http.Request) {
	id := s.identityOr503(w, r)
	if id == nil {
		return
	}
	ui, err := id.UserInfo(r.Context(), principalFrom(r.Context()))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	// The provider answers a signed JWT (reference §3); a client that
	// prefers application/json gets the bare claims.
	if id.IDTokens != nil && !prefersJSONClaims(r.Header.Values("Accept")) {
		ui.Iss = id.IDTokens.Issuer
		jwt, err := id.IDTokens.Sign(ui)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		w.Header().Set("Content-Type", "application/jwt")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(jwt))
		return
	}
	writeJSON(w, http.StatusOK, ui)
}

// neverExpiresDays is the clientSecretExpiration answered when secrets do
// not expire (--banking-client-secret-days 0): a hundred years. Clients
// read the field as a number of days to add to today and treat 0 or its
// absence as a failed change (open-condo-software/condo), so an honest 0
// would make them drop a secret the bank has already switched to.
const neverExpiresDays = 36500

// changeClientSecret is POST /ic/sso/api/v1/change-client-secret
// (reference §3): the partner replaces its own client_secret, proving
// itself with the current secret and one of its access tokens. The
// parameters are read from the form body and from the query string alike,
// since a production client sends them in the query with an empty JSON
// Content-Type (open-condo-software/condo: the provider reads them there);
// the access log records the path only, so they are not logged either way.
// The answer is {"clientSecretExpiration": N}, N the days the new secret
// lives, which is how the provider's clients read it (they add N days to
// today).
func (s *server) changeClientSecret(w http.ResponseWriter, r *http.Request) {
	id, ok := s.oauthForm(w, r)
	if !ok {
		return
	}
	f := r.Form
	clientID, secret, err := clientCredentials(r, f)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	expires, err := id.ChangeClientSecret(r.Context(), banking.ClientSecretChange{AccessToken: f.Get("access_token"),
		ClientID: clientID, ClientSecret: secret, NewClientSecret: f.Get("new_client_secret")})
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	days := neverExpiresDays
	if !expires.IsZero() {
		days = int((id.ClientSecretTTL + 12*time.Hour) / (24 * time.Hour))
	}
	noStore(w)
	writeJSON(w, http.StatusOK, map[string]int{"clientSecretExpiration": days})
}

// oauthForm is the preamble of the form-posting OAuth endpoints: the
// identity service (503 without it) and the parsed form (RFC 6749's
// invalid_request when it does not parse). ok is false when an answer has
// been written.
//
// RFC 6749 sends these parameters as an application/x-www-form-urlencoded
// body (§3.2, §4.1.3), and Go's ParseForm silently skips a body of any
// other type, so a JSON body used to reach the handlers as an empty form
// and fail client authentication (401 invalid_client) although its client
// may well have sent the right secret. A request with such a body is
// malformed, which §5.2 answers 400 invalid_request. An empty body is no
// body whatever its Content-Type: open-condo-software/condo posts
// change-client-secret with Content-Type application/json, no body and its
// parameters in the query string.
func (s *server) oauthForm(w http.ResponseWriter, r *http.Request) (id *banking.Identity, ok bool) {
	return s.oauthFormIn(w, r, func(r *http.Request) url.Values { return r.Form })
}

// oauthFormIn is oauthForm with the parameters that must not repeat chosen
// by read, after the form is parsed. The login form's submission counts its
// body alone: the form has no action, so a browser posts it to the page's
// URL, whose query string is the authorize request the hidden fields carry
// again, and reading that query as repeats refused every browser login. The
// submission reads its parameters from the body only (authorizeSubmit), so
// the query changes nothing it does.
func (s *server) oauthFormIn(w http.ResponseWriter, r *http.Request, read func(*http.Request) url.Values) (id *banking.Identity, ok bool) {
	if id = s.identityOr503(w, r); id == nil {
		return nil, false
	}
	if !formBody(r) {
		s.writeOAuthError(w, r, &banking.OAuthError{Code: "invalid_request",
			Description: "the body must be application/x-www-form-urlencoded"})
		return nil, false
	}
	if err := r.ParseForm(); err != nil {
		s.writeOAuthError(w, r, &banking.OAuthError{Code: "invalid_request", Description: "form does not parse"})
		return nil, false
	}
	if name, ok := repeatedParam(read(r)); ok {
		s.writeOAuthError(w, r, errRepeatedParam(name))
		return nil, false
	}
	return id, true
}

// repeatedParam returns a parameter v has more than once, the
// alphabetically first of them. RFC 6749 says request parameters MUST NOT
// be included more than once (§3.1, §3.2) and answers a request with one
// repeated invalid_request (§4.1.2.1, §5.2); url.Values.Get would quietly
// take the first value, so a client and a proxy in front of us could each
// read a different client_id or redirect_uri from the same request. The
// query string and the body count together (r.Form), since
// change-client-secret reads both.
func repeatedParam(v url.Values) (string, bool) {
	name, found := "", false
	for k, vs := range v {
		if len(vs) > 1 && (!found || k < name) {
			name, found = k, true
		}
	}
	return name, found
}

// errRepeatedParam is the refusal of a repeated parameter. Its name is
// quoted with %q so that whatever a client sent stays one printable
// string in the JSON answer and in logs.
func errRepeatedParam(name string) error {
	return &banking.OAuthError{Code: "invalid_request", Description: fmt.Sprintf("parameter %q is included more than once", jsonmsg.Echo(name))}
}

// formBody reports whether r's body is a URL-encoded form or empty. A body
// of unknown length (chunked) is probed for its first byte; the request is
// refused when there is one, so the byte need not be put back.
func formBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/x-www-form-urlencoded" {
		return true
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	if r.ContentLength > 0 {
		return false
	}
	var first [1]byte
	n, _ := io.ReadFull(r.Body, first[:])
	return n == 0
}

package banking

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"partnerapi/internal/jsonmsg"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OAuthError is an RFC 6749 error; the OAuth endpoints answer it as
// {"error","error_description"} rather than the banking envelope.
type OAuthError struct {
	Code        string // invalid_request, invalid_client, invalid_grant, ...
	Description string
	// Redirect is set on an authorize error found after the client and its
	// redirect_uri were checked: RFC 6749 §4.1.2.1 sends such an error back
	// to the client at that redirect_uri instead of showing it to the user.
	Redirect bool
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// ErrInvalidGrant is the token endpoint's answer to a bad code or refresh token.
func ErrInvalidGrant(desc string) error { return &OAuthError{Code: "invalid_grant", Description: desc} }

func oauthErr(code, format string, args ...any) error {
	return &OAuthError{Code: code, Description: fmt.Sprintf(format, echoArgs(args)...)}
}

// AuthenticateClient checks client_secret_post credentials.
func (id *Identity) AuthenticateClient(ctx context.Context, clientID, secret string) (PartnerApp, error) {
	app, err := id.Store.GetApp(ctx, clientID)
	if errors.Is(err, ErrNotFound) {
		return PartnerApp{}, oauthErr("invalid_client", "Unknown client or wrong secret")
	}
	if err != nil {
		return PartnerApp{}, err
	}
	if subtle.ConstantTimeCompare([]byte(app.SecretHash), []byte(HashSecret(secret))) != 1 {
		return PartnerApp{}, oauthErr("invalid_client", "Unknown client or wrong secret")
	}
	// Said only to a caller that knows the secret, so it tells nobody else
	// anything; the partner learns why its integration stopped and how to
	// get going again.
	if !app.SecretExpiresAt.IsZero() && !id.now().Before(app.SecretExpiresAt) {
		return PartnerApp{}, oauthErr("invalid_client", "Client secret expired at %s; ask the bank for a new one",
			app.SecretExpiresAt.UTC().Format(time.RFC3339))
	}
	return app, nil
}

// AuthorizeRequest is a parsed /authorize query.
type AuthorizeRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	Scope               string
	State               string
	Nonce               string
	CodeChallenge       string
	CodeChallengeMethod string
}

// CheckAuthorize validates an authorize request before the login page is
// shown: the client must exist and the redirect_uri must be registered, so
// the page never redirects a user to a stranger. Those two are checked
// first; every later refusal is sent back to the client at that
// redirect_uri (Redirect, RFC 6749 §4.1.2.1), so the partner learns why
// its user came back without a code instead of the user being left on an
// error page the partner never sees.
func (id *Identity) CheckAuthorize(ctx context.Context, r AuthorizeRequest) (PartnerApp, error) {
	app, err := id.Store.GetApp(ctx, r.ClientID)
	if errors.Is(err, ErrNotFound) {
		// invalid_request, 400: RFC 6749 has no invalid_client at the
		// authorization endpoint (§4.1.2.1 lists its codes; an unknown
		// client_id is an invalid parameter value), and the 401 of
		// invalid_client carries a Basic challenge (§5.2), which would
		// make the browser showing this page prompt for a password.
		return PartnerApp{}, oauthErr("invalid_request", "Unknown client_id")
	}
	if err != nil {
		return PartnerApp{}, err
	}
	if !slices.Contains(app.RedirectURIs, r.RedirectURI) {
		return PartnerApp{}, oauthErr("invalid_request", "redirect_uri is not registered for this client")
	}
	back := func(code, desc string) (PartnerApp, error) {
		return PartnerApp{}, &OAuthError{Code: code, Description: desc, Redirect: true}
	}
	switch r.ResponseType {
	case "code":
	case "":
		return back("invalid_request", "response_type is required")
	default:
		return back("unsupported_response_type", "response_type must be code")
	}
	if len(ParseScopes(r.Scope)) == 0 {
		return back("invalid_scope", "scope is required")
	}
	// The user's consent cannot grant more than the bank registered the app
	// for, so a scope outside its list is refused before the login page.
	if out := app.ScopesOutside(ParseScopes(r.Scope)); len(out) > 0 {
		return back("invalid_scope", "the client is not registered for scope "+jsonmsg.Echo(strings.Join(out, " ")))
	}
	if r.CodeChallenge != "" && r.CodeChallengeMethod != "S256" {
		return back("invalid_request", "only code_challenge_method S256 is supported")
	}
	// An S256 challenge is a SHA-256 in base64url without padding, 43
	// characters (RFC 7636 §4.2); no verifier matches any other, so the
	// user would sign in for a code that can never be exchanged.
	if r.CodeChallenge != "" && !s256Challenge(r.CodeChallenge) {
		return back("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code_verifier")
	}
	return app, nil
}

// s256Challenge reports whether c has the form of an S256 code_challenge.
func s256Challenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil
}

// IssueCode stores a one-time authorization code for the approved request.
func (id *Identity) IssueCode(ctx context.Context, r AuthorizeRequest, u User) (string, error) {
	code := NewUUID()
	err := id.Store.SaveCode(ctx, AuthCode{Hash: HashSecret(code), ClientID: r.ClientID, OrgID: u.OrgID,
		UserID: u.ID, RedirectURI: r.RedirectURI, Scopes: ParseScopes(r.Scope), Challenge: r.CodeChallenge,
		Nonce: r.Nonce, ExpiresAt: id.now().Add(AuthCodeTTL)})
	if err != nil {
		return "", err
	}
	return code, nil
}

// ExchangeCode redeems an authorization code (used at most once) for a
// token pair, checking the client, redirect_uri and PKCE verifier.
func (id *Identity) ExchangeCode(ctx context.Context, clientID, code, redirectURI, verifier string) (TokenPair, error) {
	// The code is used up and its tokens stored in one transaction, so a
	// failed write leaves the code for a retry instead of a used code with
	// no grant behind it. A code refused here (another client, a wrong
	// verifier) is used up as before: it may have been stolen.
	var pair TokenPair
	c, err := id.Store.RedeemCode(ctx, HashSecret(code), id.now(), func(c AuthCode) ([]Token, error) {
		if c.ClientID != clientID || c.RedirectURI != redirectURI {
			return nil, ErrInvalidGrant("Code was issued to another client or redirect_uri")
		}
		if c.Challenge != "" && !PKCEMatches(c.Challenge, verifier) {
			return nil, ErrInvalidGrant("code_verifier does not match code_challenge")
		}
		// A verifier for a code issued without a challenge is a PKCE
		// downgrade (RFC 9700 §2.1.1): a code obtained without PKCE,
		// injected into a client that uses it, would pass the very check
		// the client relies on.
		if c.Challenge == "" && verifier != "" {
			return nil, ErrInvalidGrant("code_verifier sent for a code issued without code_challenge")
		}
		var toks []Token
		pair, toks = id.newPair(codeChain(code), c.ClientID, c.OrgID, c.UserID, c.Scopes)
		return toks, nil
	})
	if errors.Is(err, ErrNotFound) {
		// A code used twice has been seen by someone else: the grant it
		// was redeemed for, if it was, is revoked with every pair
		// refreshed from it (RFC 6749 §4.1.2). Only the client the grant
		// was issued to revokes it by a replay, so a code leaked to
		// another partner does not let that one sign a user out.
		if err := id.Store.RevokeChain(ctx, codeChain(code), clientID, id.now()); err != nil {
			return TokenPair{}, err
		}
		return TokenPair{}, ErrInvalidGrant("Unknown, used or expired authorization code")
	}
	if err != nil {
		return TokenPair{}, err
	}
	now := id.now()
	pair.IDToken, err = id.idToken(c.ClientID, c.UserID, c.Scopes, c.Nonce, now, now)
	return pair, err
}

// ValidRedirectURI says why uri cannot be a registered redirect URI, nil
// when it can: RFC 6749 §3.1.2 has it absolute and without a fragment (the
// code is added to its query, and a fragment would hide it from the
// partner's server), and only http and https reach a partner's web
// server, so a javascript: or data: URI, which the authorization endpoint
// would send a user's browser to with a code, is refused here, where the
// operator can still correct it.
func ValidRedirectURI(uri string) error {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return fmt.Errorf("redirect URI %q does not parse: %v", jsonmsg.Echo(uri), err)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("redirect URI %q: want an absolute http or https URI", jsonmsg.Echo(uri))
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("redirect URI %q: want a host", jsonmsg.Echo(uri))
	case strings.Contains(uri, "#"):
		return fmt.Errorf("redirect URI %q: a fragment is not allowed (RFC 6749 §3.1.2)", jsonmsg.Echo(uri))
	}
	return nil
}

// codeChain names the grant a code is redeemed for (Token.Chain), so that
// a replay of the code finds it again once the code itself is gone. It is
// a hash of the code, which is not stored anywhere in the clear.
func codeChain(code string) string { return HashSecret("grant of code " + code) }

// PKCEMatches checks an S256 code_verifier against its challenge (RFC 7636).
func PKCEMatches(challenge, verifier string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// Revoke revokes a token of clientID; unknown tokens are not an error
// (RFC 7009 §2.2). A refresh token takes its whole grant with it (RFC 7009
// §2.1: the access tokens of the same grant SHOULD go too): every access
// token issued with it or refreshed in its chain, and the chain's other
// refresh token (its reserve or its successor), which would otherwise mint
// new access tokens at once. An access token goes alone, so a client that
// drops one of its access tokens keeps its session.
func (id *Identity) Revoke(ctx context.Context, clientID, token string) error {
	t, err := id.Store.GetToken(ctx, HashSecret(token))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.ClientID != clientID {
		return nil
	}
	revoke := id.Store.RevokeToken
	if t.Kind == TokenRefresh {
		revoke = id.Store.RevokeGrant
	}
	if err := revoke(ctx, t.Hash, id.now()); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// UserInfo is the claims of the token's user and organisation (reference
// §3). Every claim is present, an empty string where the bank was not told
// the value: open-condo-software/condo refuses user-info without inn,
// OrgName, orgJuridicalAddress, email, userGuid and phone_number, and
// reads phone_number as a string.
type UserInfo struct {
	Sub                 string `json:"sub"`
	Iss                 string `json:"iss"`
	Aud                 string `json:"aud"`
	INN                 string `json:"inn"`
	OrgName             string `json:"OrgName"`
	OrgFullName         string `json:"orgFullName"`
	OrgJuridicalAddress string `json:"orgJuridicalAddress"`
	OrgKPP              string `json:"orgKpp"`
	OrgOGRN             string `json:"orgOgrn"`
	OrgLawForm          string `json:"orgLawForm"`
	OrgLawFormShort     string `json:"orgLawFormShort"`
	HashOrgID           string `json:"HashOrgId"`
	UserGUID            string `json:"userGuid"`
	TerBank             string `json:"terBank"`
	UserSignatureType   string `json:"userSignatureType"`
	UserCryptoType      string `json:"userCryptoType"`
	// IndividualExecutiveAgency is 1 for the organisation's sole executive
	// body, else 0: a number, as the provider's samples carry it.
	IndividualExecutiveAgency int `json:"individualExecutiveAgency"`
	// IsIdentified tells that the user holds an active signing
	// certificate, which the bank issues only to a person it identified.
	IsIdentified bool              `json:"isIdentified"`
	PhoneNumber  string            `json:"phone_number"`
	Email        string            `json:"email"`
	Accounts     []UserInfoAccount `json:"accounts"`
}

// userCryptoType is user-info's name of a user's signing tool (reference
// §3: SMS or TOKEN): a one-time password comes by SMS, a certificate key
// sits on a token.
func userCryptoType(u User) string {
	if u.SigningMethodOf() == SigningOneTimePassword {
		return "SMS"
	}
	return "TOKEN"
}

// UserInfoAccount is an account claim.
type UserInfoAccount struct {
	AccountNumber     string `json:"accountNumber"`
	BIC               string `json:"bic"`
	CorrAccountNumber string `json:"corrAccountNumber"`
}

// UserInfo returns the claims for a principal.
func (id *Identity) UserInfo(ctx context.Context, p Principal) (UserInfo, error) {
	org, err := id.Store.GetOrg(ctx, p.OrgID)
	if err != nil {
		return UserInfo{}, fmt.Errorf("user-info org: %w", err)
	}
	u, err := id.Store.GetUser(ctx, p.UserID)
	if err != nil {
		return UserInfo{}, fmt.Errorf("user-info user: %w", err)
	}
	accts, err := id.Store.ListAccounts(ctx, p.OrgID)
	if err != nil {
		return UserInfo{}, err
	}
	certs, err := id.Store.ListCertificates(ctx, u.ID)
	if err != nil {
		return UserInfo{}, err
	}
	signs := signingRights(certs, id.now())
	// HashOrgId is the organisation's hash as 64 lower-case hex digits, the
	// shape of condo's real user-info samples and of the payeeOrgIdHash an
	// invoice draft names a payee organisation by (reference §4.1), so a
	// partner can pass one as the other.
	h := sha256.Sum256([]byte(org.ID))
	ui := UserInfo{Sub: u.ID, Iss: "partnerapi", Aud: p.PartnerID, INN: org.INN, OrgName: org.Name,
		OrgFullName: org.FullName, OrgJuridicalAddress: org.JuridicalAddress, OrgKPP: org.KPP, OrgOGRN: org.OGRN,
		OrgLawForm: org.FormFull(), OrgLawFormShort: org.Form(),
		HashOrgID: hex.EncodeToString(h[:]), UserGUID: u.ID, TerBank: TerritorialBank(org, accts),
		UserSignatureType: userSignatureType(signs), UserCryptoType: userCryptoType(u),
		IndividualExecutiveAgency: executiveClaim(u), IsIdentified: len(signs.Roles) > 0,
		PhoneNumber: u.Phone, Email: u.Email, Accounts: []UserInfoAccount{}}
	for _, a := range accts {
		ui.Accounts = append(ui.Accounts, UserInfoAccount{a.Number, a.BIC, a.CorrAccount})
	}
	return ui, nil
}

// pbkdf2Iterations follows OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
const pbkdf2Iterations = 600000

// HashPassword derives a salted PBKDF2-SHA256 hash (the standard library's,
// so the module needs no extra dependency) as "pbkdf2-sha256$iter$salt$key".
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, pbkdf2Iterations, 32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pbkdf2-sha256$%d$%s$%s", pbkdf2Iterations, hex.EncodeToString(salt), hex.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches a HashPassword result.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 {
		return false
	}
	salt, err1 := hex.DecodeString(parts[2])
	want, err2 := hex.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// Package banking is the domain of the business-banking API: organisations,
// principals and scopes, payment documents, digests, signature rules,
// business cards and limits, statuses. It does no HTTP and no SQL.
package banking

import (
	"context"
	"slices"
)

// Scopes of the banking API (reference §2).
const (
	ScopePayDocRU              = "PAY_DOC_RU"
	ScopePayDocRUInvoice       = "PAY_DOC_RU_INVOICE"
	ScopePayDocRUInvoiceAny    = "PAY_DOC_RU_INVOICE_ANY"
	ScopePayDocRUInvoiceBudget = "PAY_DOC_RU_INVOICE_BUDGET"
	ScopeBusinessCardLimit     = "BUSINESS_CARD_LIMIT"
	ScopeGetCryptoInfo         = "GET_CRYPTO_INFO"
	ScopeGetCryptoInfoEIO      = "GET_CRYPTO_INFO_EIO"
	ScopeGetClientAccounts     = "GET_CLIENT_ACCOUNTS"
	ScopeOpenID                = "openid"
)

// Scopes is every scope this API grants access by (reference §2), in the
// reference's order. Only the provisioning CLI refuses a scope outside it:
// the OAuth endpoints take any, since real clients ask for the provider's
// other services and for claim names in the same scope string
// (open-condo-software/condo and the SDK samples send "openid ... inn email
// accounts ..."), and refusing those would break their sign-in.
var Scopes = []string{ScopePayDocRU, ScopePayDocRUInvoice, ScopePayDocRUInvoiceAny, ScopePayDocRUInvoiceBudget,
	ScopeBusinessCardLimit, ScopeGetCryptoInfo, ScopeGetCryptoInfoEIO, ScopeGetClientAccounts, ScopeOpenID}

// UnknownScopes returns those of requested that are not in Scopes, in
// request order.
func UnknownScopes(requested []string) []string {
	var out []string
	for _, s := range requested {
		if !slices.Contains(Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// Principal is who an access token speaks for: a user of a client
// organisation, through a partner application, with scopes.
type Principal struct {
	OrgID     string
	UserID    string
	PartnerID string // the partner application's client_id
	Scopes    []string
}

// HasAny reports whether the principal holds at least one of scopes.
func (p Principal) HasAny(scopes ...string) bool {
	for _, s := range scopes {
		if slices.Contains(p.Scopes, s) {
			return true
		}
	}
	return false
}

// Authenticator resolves an access token to its principal; unknown,
// revoked or expired tokens give an error of kind Unauthorized.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// DigestSignature is one element of digestSignatures (reference §9.1).
type DigestSignature struct {
	Base64Encoded   string `json:"base64Encoded"`
	CertificateUUID string `json:"certificateUuid"`
	SignType        string `json:"signType,omitempty"`
}

// SignatureRole is what a verified signature counts as.
type SignatureRole string

const (
	RoleSoleAuthority SignatureRole = "SOLE"      // единственная подпись
	RoleFirst         SignatureRole = "FIRST"     // первая подпись
	RoleSecond        SignatureRole = "SECOND"    // вторая подпись
	RoleQualified     SignatureRole = "QUALIFIED" // УКЭП (signType UKEP_UL)
)

// SignatureSet is the roles a document's valid signatures cover.
type SignatureSet struct {
	Roles []SignatureRole
	// Foreign lists the certificateUuid of every signature made with a
	// known certificate of someone other than the token's user. Only
	// VerifyDocument reports them; Verify refuses such a signature instead.
	// Nil for the common set, so the hot path allocates nothing for it.
	Foreign []string
}

// Has reports whether the set covers role.
func (s SignatureSet) Has(r SignatureRole) bool { return slices.Contains(s.Roles, r) }

// Complete reports whether the set authorises execution: a sole-authority
// or qualified signature, or both first and second.
func (s SignatureSet) Complete() bool {
	return s.Has(RoleSoleAuthority) || s.Has(RoleQualified) || (s.Has(RoleFirst) && s.Has(RoleSecond))
}

// Partial reports whether exactly one of first/second is present.
func (s SignatureSet) Partial() bool {
	return !s.Complete() && (s.Has(RoleFirst) || s.Has(RoleSecond))
}

// SignatureVerifier is the one verification policy payments and card
// limits use (reference §9): in the sandbox the fixed test certificate uuids
// decide the outcome; in the test and production contours the certificate
// must exist, be active and belong to the principal's user, and every
// signature must verify over the exact digest text. It also enforces the
// signature-set rules (at most two; sole never mixed with first/second; the
// same certificate twice is an error).
type SignatureVerifier interface {
	// Verify is the strict policy card limits use: outside the sandbox a
	// certificate that is not the token user's is a SIGN_CHECK_EXCEPTION.
	Verify(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error)
	// VerifyDocument is the policy of payment documents: everything Verify
	// refuses is refused alike, except a token/certificate mismatch, which
	// reference §9.1 turns into a document that ends in INVALIDEDS. Such a
	// signature is checked like any other (the certificate active, the CMS
	// valid, the signType right) and its role counted, and its uuid is
	// listed in SignatureSet.Foreign; in the sandbox that is one of the
	// fixed uuids sent with the token of a user other than the sandbox user.
	// digest is read in place from a create's pooled buffer, valid only
	// until VerifyDocument returns: an implementation that keeps it keeps
	// a copy (strings.Clone).
	VerifyDocument(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error)
}

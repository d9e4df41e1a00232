package bankapi

import (
	"encoding/base64"
	"net/http"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// apiPrefix is the provider's API path prefix (reference §1).
const apiPrefix = "/fintech/api"

// addIdentityRoutes serves client-info and the crypto info, business
// operations of the API under its prefix, gated as the payment operations
// are (maintenance 503, rate limit 429 per token and operation; auth.go,
// gated), and the OAuth endpoints, which are not: the bank's identity
// server answers those (/ic/sso, /ic/sbbid, outside the API's prefix),
// not the API whose maintenance the switch stands for, and a partner
// must still sign in and refresh its tokens while the API is closed.
// Without an identity service there is no Gate, and the routes answer
// 503 anyway (identityOr503).
func (s *server) addIdentityRoutes(mux *web.Mux) {
	g := func() *banking.Gate {
		if s.Identity == nil {
			return nil
		}
		return s.Identity.Gate
	}
	mux.HandleFunc("GET", apiPrefix+"/v1/client-info", s.gatedScope(g, "client-info", s.clientInfo, banking.ScopeGetClientAccounts))
	mux.HandleFunc("GET", apiPrefix+"/v1/crypto", s.gatedScope(g, "crypto-info", s.cryptoInfo, banking.ScopeGetCryptoInfo))
	mux.HandleFunc("GET", apiPrefix+"/v1/crypto/eio", s.gatedScope(g, "crypto-info-eio", s.cryptoInfoEIO, banking.ScopeGetCryptoInfoEIO))
	s.addOAuthRoutes(mux)
}

// identityOr503 answers 503 when the server was built without identity.
func (s *server) identityOr503(w http.ResponseWriter, r *http.Request) *banking.Identity {
	if s.Identity == nil {
		writeError(w, r, s.log, banking.Errorf(banking.KindUnavailable, "Сервис идентификации недоступен"))
	}
	return s.Identity
}

// clientAccount is one account of client-info (reference §10). type
// follows the provider's Account model as open-condo-software/condo
// transcribes it (SbbolAccount), where the reference's sample leaves it
// open: one of assuranceRegistration, calculated, transit, specialTransit,
// budget, loan, deposit (the bank keeps settlement accounts, calculated).
// overdraft stays the flag of the reference's sample, which condo types as
// the limit, a number: where client sources differ the reference's own
// sample wins, and neither SDK reads the member.
type clientAccount struct {
	Number       string  `json:"number"`
	BIC          string  `json:"bic"`
	CurrencyCode string  `json:"currencyCode"`
	Name         string  `json:"name"`
	OpenDate     string  `json:"openDate"`
	CloseDate    *string `json:"closeDate"`
	State        string  `json:"state"`
	Type         string  `json:"type"`
	Mode         string  `json:"mode"`
	Business     bool    `json:"business"`
	Urgent       bool    `json:"urgent"`
	NotDelay     bool    `json:"notDelay"`
	Overdraft    bool    `json:"overdraft"`
	MinBalance   float64 `json:"minBalance"`
}

// clientAddress is one element of client-info's addresses. Of the
// provider's address members (the Java SDK's Address: zip, region, city,
// street, house, ... and type) the bank knows only the registered address
// as one line, so only fullAddress is written; the type codes are not
// published.
type clientAddress struct {
	FullAddress string `json:"fullAddress"`
}

type clientInfo struct {
	ShortName string          `json:"shortName"`
	FullName  string          `json:"fullName"`
	OGRN      string          `json:"ogrn"`
	INN       string          `json:"inn"`
	OrgForm   string          `json:"orgForm"`
	Addresses []clientAddress `json:"addresses"`
	KPPs      []string        `json:"kpps"`
	Accounts  []clientAccount `json:"accounts"`
}

// clientInfo is GET /v1/client-info: the token's organisation (reference §10).
func (s *server) clientInfo(w http.ResponseWriter, r *http.Request) {
	id := s.identityOr503(w, r)
	if id == nil {
		return
	}
	p := principalFrom(r.Context())
	org, err := id.Store.GetOrg(r.Context(), p.OrgID)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	accts, err := id.Store.ListAccounts(r.Context(), p.OrgID)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	ci := clientInfo{ShortName: org.Name, FullName: org.FullName, OGRN: org.OGRN, INN: org.INN,
		OrgForm: org.Form(), Addresses: []clientAddress{}, KPPs: []string{}, Accounts: []clientAccount{}}
	// The registered address is user-info's orgJuridicalAddress too
	// (banking org create --address); an organisation without one has
	// none listed.
	if org.JuridicalAddress != "" {
		ci.Addresses = append(ci.Addresses, clientAddress{FullAddress: org.JuridicalAddress})
	}
	if org.KPP != "" {
		ci.KPPs = append(ci.KPPs, org.KPP)
	}
	for _, a := range accts {
		ca := clientAccount{Number: a.Number, BIC: a.BIC, CurrencyCode: a.Currency, Name: a.Name,
			OpenDate: a.OpenDate, State: a.Status, Type: "calculated", Mode: accountMode(a.Status), Business: true, Urgent: true}
		// null, as before close dates were kept, unless the bank was told
		// the day the account was closed.
		if a.CloseDate != "" {
			ca.CloseDate = &a.CloseDate
		}
		ci.Accounts = append(ci.Accounts, ca)
	}
	writeJSON(w, http.StatusOK, ci)
}

// accountMode is an account's client-info mode (reference §10: STANDART,
// FORBIDDEN_RECEIVING or ONLY_RECEIVING), which says what may move
// through the account. A blocked account is debited by no payment (the
// payments area refuses one from it, payerAccountState) while money paid
// to it is still credited, so it only receives: ONLY_RECEIVING.
// FORBIDDEN_RECEIVING, the opposite restriction (credits refused, debits
// allowed), fits no state the bank keeps. A closed account keeps STANDART:
// neither restriction alone describes it, and its state says it is closed.
func accountMode(state string) string {
	if state == banking.AccountBlocked {
		return "ONLY_RECEIVING"
	}
	return "STANDART"
}

type certificateInfo struct {
	Active       bool   `json:"active"`
	Cert         string `json:"cert"`
	Issuer       string `json:"issuer"`
	SerialNumber string `json:"serialNumber"`
	UUID         string `json:"uuid"`
}

type cryptoProfile struct {
	Alias            string            `json:"alias"`
	TypeName         string            `json:"typeName"`
	CertificateInfos []certificateInfo `json:"certificateInfos"`
}

type cryptoInfo struct {
	CertBank           string          `json:"certBank"`
	CertBankUUID       string          `json:"certBankUuid"`
	CertCenterCode     string          `json:"certCenterCode"`
	CertCenterNum      string          `json:"certCenterNum"`
	CertsCA            []string        `json:"certsCA"`
	CryptoProfileInfos []cryptoProfile `json:"cryptoProfileInfos"`
}

// cryptoInfo is GET /v1/crypto: the bank's certificate and the token
// user's certificates grouped by crypto profile type (reference §10).
// certBank is the certificate of the key that signs JWS answers, id_tokens
// and webhooks (bank_key.go), so a partner can take the certificate to
// verify them from here; certBankUuid is that certificate's JWS kid,
// derived from the certificate itself, so it stays the same across
// restarts and across instances given the same key file. The same
// certificate is certsCA's one entry: the bank's key is the CA of the
// certificates that activated certificate requests issue (certreq.go), so
// a partner checks their chain against it. A server built without a bank
// key answers all three empty. A certificate is active while the operator
// has not deactivated it and the clock is within its validity period: the
// signatures the bank takes (Identity.CertificateActive).
func (s *server) cryptoInfo(w http.ResponseWriter, r *http.Request) {
	id := s.identityOr503(w, r)
	if id == nil {
		return
	}
	p := principalFrom(r.Context())
	profiles, err := s.cryptoProfiles(r, id, p.UserID)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	ci := cryptoInfo{CertsCA: s.certsCA(), CryptoProfileInfos: profiles}
	if s.JWS != nil {
		ci.CertBank, ci.CertBankUUID = ci.CertsCA[0], s.JWS.Kid
	}
	writeJSON(w, http.StatusOK, ci)
}

// certsCA is the bank's certificate as certsCA's one entry (base64 DER),
// none without a bank key.
func (s *server) certsCA() []string {
	if s.JWS == nil {
		return []string{}
	}
	return []string{base64.StdEncoding.EncodeToString(s.JWS.Cert.Raw)}
}

// cryptoProfiles lists the user's certificates in the principal's
// organisation, grouped by crypto profile type in the order first seen.
func (s *server) cryptoProfiles(r *http.Request, id *banking.Identity, userID string) ([]cryptoProfile, error) {
	certs, err := id.Store.ListCertificates(r.Context(), userID)
	if err != nil {
		return nil, err
	}
	orgID := principalFrom(r.Context()).OrgID
	profiles := []cryptoProfile{}
	index := map[string]int{}
	for _, c := range certs {
		if c.OrgID != orgID {
			continue
		}
		i, ok := index[c.TypeName]
		if !ok {
			i = len(profiles)
			index[c.TypeName] = i
			profiles = append(profiles, cryptoProfile{Alias: c.TypeName, TypeName: c.TypeName, CertificateInfos: []certificateInfo{}})
		}
		profiles[i].CertificateInfos = append(profiles[i].CertificateInfos, certificateInfo{
			Active: id.CertificateActive(c), Cert: base64.StdEncoding.EncodeToString(c.DER), Issuer: c.Issuer, SerialNumber: c.Serial, UUID: c.UUID})
	}
	return profiles, nil
}

// cryptoUserInfo is one user of a /v1/crypto/eio answer: sub is the user's
// id, user-info's sub.
type cryptoUserInfo struct {
	Sub                string          `json:"sub"`
	CryptoProfileInfos []cryptoProfile `json:"cryptoProfileInfos"`
}

// cryptoInfoEIO is the /v1/crypto/eio answer. Its shape is not /v1/crypto's:
// the Java SDK reads it into CryptoInfoEIOResponse (certCenterCode,
// certCenterNum, certsCA, cryptoUserInfos[{sub, cryptoProfileInfos}]) with
// a Jackson mapper that fails on any other property, so certBank and a
// top-level cryptoProfileInfos would break its getCryptoEio.
type cryptoInfoEIO struct {
	CertCenterCode  string           `json:"certCenterCode"`
	CertCenterNum   string           `json:"certCenterNum"`
	CertsCA         []string         `json:"certsCA"`
	CryptoUserInfos []cryptoUserInfo `json:"cryptoUserInfos"`
}

// cryptoInfoEIO is GET /v1/crypto/eio (reference §10: "similar" to
// /v1/crypto): the crypto profiles of every user of the token's
// organisation, each under its sub, for the sole executive body who asks
// for its users' certificates (cert-requests/eio names a user by login).
// Users appear in login order, those without certificates with no
// profiles.
func (s *server) cryptoInfoEIO(w http.ResponseWriter, r *http.Request) {
	id := s.identityOr503(w, r)
	if id == nil {
		return
	}
	users, err := id.Store.ListUsers(r.Context(), principalFrom(r.Context()).OrgID)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	ci := cryptoInfoEIO{CertsCA: s.certsCA(), CryptoUserInfos: []cryptoUserInfo{}}
	for _, u := range users {
		profiles, err := s.cryptoProfiles(r, id, u.ID)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		ci.CryptoUserInfos = append(ci.CryptoUserInfos, cryptoUserInfo{Sub: u.ID, CryptoProfileInfos: profiles})
	}
	writeJSON(w, http.StatusOK, ci)
}

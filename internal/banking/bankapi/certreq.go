package bankapi

import (
	"net/http"
	"strconv"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// cryptoScopes guard the certificate requests. Reference §2 names scopes
// only for GET /v1/crypto (GET_CRYPTO_INFO) and /v1/crypto/eio
// (GET_CRYPTO_INFO_EIO) and none for the requests under /v1/crypto; they
// are taken as the crypto area's, either one for every request route,
// since the Java SDK activates an ordinary request through the eio path
// (its activateCert posts to /cert-requests/eio/{externalId}/activate).
var cryptoScopes = []string{banking.ScopeGetCryptoInfo, banking.ScopeGetCryptoInfoEIO}

// addCertRequestRoutes serves the certificate requests of reference §10
// under every path the SDKs use: the Java SDK's under /v1, the Node SDK's
// create and print under /v2, and the EIO variants under .../eio. A
// request's externalId is one per organisation whichever path created it,
// so state and activate under either path find it.
func (s *server) addCertRequestRoutes(mux *web.Mux) {
	if s.CertRequests == nil {
		return
	}
	// Gated like the payment operations (maintenance 503, rate limit 429
	// per token and operation) after authentication and the scope.
	gate := func(op string, h principalHandler) http.HandlerFunc {
		return s.gated(func() *banking.Gate { return s.CertRequests.Gate }, op, h, cryptoScopes...)
	}
	for _, v := range []string{"/v1", "/v2"} {
		base := apiPrefix + v + "/crypto/cert-requests"
		mux.HandleFunc("POST", base, gate("cert-request-create", s.createCertRequest(false)))
		mux.HandleFunc("POST", base+"/eio", gate("cert-request-create", s.createCertRequest(true)))
		mux.HandleFunc("GET", base+"/{externalId}/print", gate("cert-request-print", s.printCertRequest))
	}
	// The Node SDK uses /v2 only to create and print; state and activate
	// are /v1 in both SDKs, under the plain and the eio paths.
	for _, b := range []string{apiPrefix + "/v1/crypto/cert-requests", apiPrefix + "/v1/crypto/cert-requests/eio"} {
		mux.HandleFunc("GET", b+"/{externalId}/state", gate("cert-request-state", s.certRequestState))
		mux.HandleFunc("POST", b+"/{externalId}/activate", gate("cert-request-activate", s.activateCertRequest))
	}
	mux.HandleFunc("GET", apiPrefix+"/v1/crypto/cert-requests/eio/{externalId}/print", gate("cert-request-print", s.printCertRequest))
}

func (s *server) createCertRequest(eio bool) principalHandler {
	return func(w http.ResponseWriter, r *http.Request, p banking.Principal) {
		var body banking.CertRequestBody
		if err := decodeJSONBody(r, &body); err != nil {
			s.writePaymentError(w, r, err)
			return
		}
		out, err := s.CertRequests.Create(r.Context(), p, body, eio)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		writeJSON(w, http.StatusCreated, out)
	}
}

func (s *server) certRequestState(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	cr, err := s.CertRequests.Get(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, cr.State())
}

// printCertRequest answers the paper form as a PDF attachment, what both
// SDKs read as bytes; printing moves a CREATED request to PRINTED.
func (s *server) printCertRequest(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	id := r.PathValue("externalId")
	pdf, err := s.CertRequests.PrintForm(r.Context(), p, id)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="cert-request-`+id+`.pdf"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf)
}

// activateCertRequest answers 201 with the request's new state: the Java
// SDK reads no body (Call<Void>), the Node SDK returns whatever JSON comes.
func (s *server) activateCertRequest(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	cr, err := s.CertRequests.Activate(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, cr.State())
}

package bankapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"partnerapi/internal/banking"
	"partnerapi/internal/jsonexact"
	"partnerapi/internal/web"
)

// paymentsBase is the provider's path prefix (reference §1).
const paymentsBase = "/fintech/api/v1/payments"

// anyPaymentScope may read a document's state and digest (reference §2:
// the state works with any of the four payment scopes; reading the
// document itself takes PAY_DOC_RU).
var anyPaymentScope = []string{banking.ScopePayDocRU, banking.ScopePayDocRUInvoice, banking.ScopePayDocRUInvoiceAny, banking.ScopePayDocRUInvoiceBudget}

func (s *server) addPaymentRoutes(mux *web.Mux) {
	if s.Payments == nil {
		return
	}
	// Each operation is gated (maintenance 503, rate limit 429 per token and
	// operation) after authentication, so an anonymous flood cannot spend a
	// partner's budget (auth.go, gated).
	gate := func(op string, h principalHandler, scopes ...string) http.HandlerFunc {
		return s.gated(func() *banking.Gate { return s.Payments.Gate }, op, h, scopes...)
	}
	mux.HandleFunc("POST", paymentsBase, gate("create", s.createPayment, banking.ScopePayDocRU))
	mux.HandleFunc("POST", paymentsBase+"/from-invoice", gate("from-invoice", s.createInvoice(banking.KindInvoice), banking.ScopePayDocRUInvoice))
	mux.HandleFunc("POST", paymentsBase+"/from-invoice-any", gate("from-invoice-any", s.createInvoice(banking.KindInvoiceAny), banking.ScopePayDocRUInvoiceAny))
	mux.HandleFunc("POST", paymentsBase+"/from-invoice-budget", gate("from-invoice-budget", s.createInvoice(banking.KindInvoiceBudget), banking.ScopePayDocRUInvoiceBudget))
	mux.HandleFunc("POST", paymentsBase+"/qr-confirmation", gate("qr-confirmation", s.qrConfirm, banking.ScopePayDocRU))
	mux.HandleFunc("GET", paymentsBase+"/{externalId}", gate("get", s.getPayment, banking.ScopePayDocRU))
	mux.HandleFunc("GET", paymentsBase+"/{externalId}/state", gate("state", s.paymentState, anyPaymentScope...))
	mux.HandleFunc("GET", paymentsBase+"/{externalId}/digest", gate("digest", s.paymentDigest, anyPaymentScope...))
	mux.HandleFunc("GET", paymentsBase+"/{externalId}/history", gate("history", s.paymentHistory, anyPaymentScope...))           // payments_history.go
	mux.HandleFunc("GET", paymentsBase+"/{externalId}/requisites-qr", gate("requisites-qr", s.requisitesQR, anyPaymentScope...)) // payments_qr.go
	mux.HandleFunc("POST", paymentsBase+"/{externalId}/sign", gate("sign", s.signPayment, banking.ScopePayDocRU))
	s.addSandboxPaymentRoutes(mux, gate) // payments_sandbox.go
}

// decodePaymentBody reads a JSON body: unparseable JSON, wrong JSON types and
// a body declared of another type are DESERIALIZATION_FAULT, the first two
// naming the fields (reference §13); an oversized body is the platform's
// error. A body sent as application/jose is a compact JWS whose payload,
// once openJose has checked it for who, is decoded as that JSON body
// would be. A payment document takes
// banking.DecodePaymentFast when the body is in its subset (it decodes
// exactly as encoding/json would); every other body, and so every error
// answer, is encoding/json's.
func (s *server) decodePaymentBody(r *http.Request, who *banking.Principal, v any) error {
	if p, ok := v.(*banking.Payment); ok {
		return s.decodePayment(r, who, p)
	}
	jose := false
	if !acceptsJSONBody(r) {
		if !s.takesJose(r) {
			return errNotJSON()
		}
		jose = true
	}
	buf, err := readBody(r.Body)
	defer releaseBody(buf)
	if err != nil {
		return readError(err)
	}
	body := *buf
	if jose {
		if body, err = s.openJose(r, who, body); err != nil {
			return err
		}
	}
	return unmarshalBody(body, v)
}

// decodePayment is decodePaymentBody for a payment document. It keeps p
// from escaping (decodePaymentBody's any does), so a handler's document
// stays on its stack; only a body encoding/json must decode takes a
// heap copy. The JWS check is a branch of the refusal of a non-JSON type,
// so a JSON body costs what it did before payments took JWS.
func (s *server) decodePayment(r *http.Request, who *banking.Principal, p *banking.Payment) error {
	jose := false
	if !acceptsJSONBody(r) {
		if !s.takesJose(r) {
			return errNotJSON()
		}
		jose = true
	}
	buf, err := readBody(r.Body)
	defer releaseBody(buf)
	if err != nil {
		return readError(err)
	}
	body := *buf
	if jose {
		if body, err = s.openJose(r, who, body); err != nil {
			return err
		}
	}
	if banking.DecodePaymentFast(body, p) {
		return nil
	}
	var slow banking.Payment
	if err := unmarshalBody(body, &slow); err != nil {
		return err
	}
	*p = slow
	return nil
}

// decodeJSONBody is decodePaymentBody for the operations outside
// /v1/payments that share its errors (certificate requests, the webhook
// setting): they take JSON only, and a body sent as application/jose is
// DESERIALIZATION_FAULT like any other non-JSON type.
func decodeJSONBody(r *http.Request, v any) error {
	if !acceptsJSONBody(r) {
		return errNotJSON()
	}
	buf, err := readBody(r.Body)
	defer releaseBody(buf)
	if err != nil {
		return readError(err)
	}
	return unmarshalBody(*buf, v)
}

// readError maps a failed body read: the platform's error for an
// oversized body, DESERIALIZATION_FAULT for anything else.
func readError(err error) error {
	var be *banking.Error
	if web.IsBodyTooLarge(err) || errors.As(err, &be) {
		return err
	}
	return banking.Errorf(banking.KindDeserialization, "Не удалось прочитать тело запроса")
}

// unmarshalBody decodes body into v with encoding/json, its errors as
// DESERIALIZATION_FAULT naming the field (banking.DeserializationFault).
// DecodePaymentFast's refusals end here too, so both decoders answer alike:
// member names match exactly (jsonexact), as the fast decoder's do.
func unmarshalBody(body []byte, v any) error {
	body = jsonexact.Names(body, v)
	if err := json.Unmarshal(body, v); err != nil {
		return banking.DeserializationFault(body, err)
	}
	return nil
}

// bodyBuffers hold request bodies while they are decoded. Both decoders
// copy what they keep (DecodePaymentFast takes one string of the body,
// encoding/json copies every value), so a buffer is reused once decoding
// returns instead of io.ReadAll growing a new slice for every request.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// readBody reads all of r into a pooled buffer; releaseBody returns it. A
// body that is not UTF-8 is utf8Body's error.
func readBody(r io.Reader) (*[]byte, error) {
	bp := bodyBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			*bp = b
			if err == io.EOF {
				err = utf8Body(b)
			}
			return bp, err
		}
	}
}

// releaseBody pools a body buffer again, unless a large body grew it (the
// pool would keep a megabyte per buffer alive).
func releaseBody(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		bodyBuffers.Put(bp)
	}
}

func (s *server) writePaymentError(w http.ResponseWriter, r *http.Request, err error) {
	if web.IsBodyTooLarge(err) {
		s.platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
		return
	}
	writeError(w, r, s.log, err)
}

func (s *server) createPayment(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	var d banking.Payment
	if err := s.decodePayment(r, &p, &d); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	// The answer is spliced from the document's stored encoding rather than
	// encoded a second time (PaymentService.CreateJSON), into a pooled
	// buffer: Write copies it out before the buffer is pooled again.
	bp := answerBuffers.Get().(*[]byte)
	defer releaseAnswer(bp)
	body, err := s.Payments.AppendCreateJSON(r.Context(), (*bp)[:0], p, d)
	*bp = body
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	// The shared value saves Header.Set's slice per answer; net/http only
	// reads it, and an Add elsewhere would grow a copy (its cap is 1).
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// releaseAnswer pools an answer buffer again unless an unusual document
// grew it past what is worth keeping.
func releaseAnswer(bp *[]byte) {
	if cap(*bp) <= 16<<10 {
		answerBuffers.Put(bp)
	}
}

var jsonContentType = []string{"application/json"}

func (s *server) createInvoice(k banking.DocKind) principalHandler {
	return func(w http.ResponseWriter, r *http.Request, p banking.Principal) {
		var d banking.Payment
		if err := s.decodePayment(r, &p, &d); err != nil {
			s.writePaymentError(w, r, err)
			return
		}
		out, err := s.Payments.CreateInvoice(r.Context(), p, k, d)
		if err != nil {
			s.writePaymentError(w, r, err)
			return
		}
		if back := r.URL.Query().Get("backUrl"); back != "" {
			out.SigningURL = s.Payments.SigningURL(out.ExternalID, back)
		}
		writeJSON(w, http.StatusCreated, out)
	}
}

func (s *server) getPayment(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	out, err := s.Payments.Get(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) paymentState(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	out, err := s.Payments.State(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// paymentDigest answers the exact text to sign as text/plain, so clients
// sign the bytes they receive; ?payerAccount= gives a payer-less invoice
// draft's digest as /sign with that account will complete it.
func (s *server) paymentDigest(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	out, err := s.Payments.Digest(r.Context(), p, r.PathValue("externalId"), r.URL.Query().Get("payerAccount"))
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, out)
}

type signBody struct {
	DigestSignatures []banking.DigestSignature `json:"digestSignatures"`
	// PayerAccount completes a draft from an invoice that has no payer
	// (banking.PaymentService.Sign).
	PayerAccount string `json:"payerAccount"`
}

func (s *server) signPayment(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	var b signBody
	if err := s.decodePaymentBody(r, &p, &b); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	out, err := s.Payments.Sign(r.Context(), p, r.PathValue("externalId"), b.DigestSignatures, b.PayerAccount)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

type qrBody struct {
	ExternalDocIDs []string `json:"externalDocIds"`
}

func (s *server) qrConfirm(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	var b qrBody
	if err := s.decodePaymentBody(r, &p, &b); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	for i := range b.ExternalDocIDs {
		b.ExternalDocIDs[i] = strings.TrimSpace(b.ExternalDocIDs[i])
	}
	out, err := s.Payments.QRConfirm(r.Context(), p, b.ExternalDocIDs)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

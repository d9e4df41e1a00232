package bankapi

import (
	"mime"
	"net/http"
	"strings"

	"rsc.io/qr"

	"partnerapi/internal/banking"
)

// requisitesQRLevel is the error-correction level of the PNG: M (15 %
// recovery) is what payment QR codes on invoices commonly use, a balance
// between a small symbol and a print that survives a crease.
const requisitesQRLevel = qr.M

// requisitesQRScale is the size of one QR module in PNG pixels; at 4 a
// typical payload (version 10–15, 57–77 modules plus the quiet zone) is
// 260–340 pixels wide, enough for a phone camera on screen or paper.
const requisitesQRScale = 4

// requisitesQRBody is the JSON answer of the requisites QR operation.
type requisitesQRBody struct {
	Payload string `json:"payload"`
}

// requisitesQR answers the ST00012 payload of a document (reference §14):
// JSON by default, a PNG QR code when the client asks for image/png by the
// Accept header or by ?format=png.
func (s *server) requisitesQR(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	png, err := wantsPNG(r)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	payload, err := s.Payments.RequisitesQR(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	if !png {
		writeJSON(w, http.StatusOK, requisitesQRBody{Payload: payload})
		return
	}
	img, err := requisitesPNG(payload)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(img)
}

// requisitesPNG draws payload as a QR code. The payload always holds `=`,
// which the numeric and alphanumeric modes lack, so the library writes it
// in byte mode, as GOST R 56042-2014 asks, and the bytes are the UTF-8 of
// the payload. A payload too long for any QR version is a validation fault
// rather than an internal error: it is the document's content that does
// not fit.
func requisitesPNG(payload string) ([]byte, error) {
	code, err := qr.Encode(payload, requisitesQRLevel)
	if err != nil {
		return nil, &banking.Error{Kind: banking.KindValidation, Message: "Невозможно сформировать QR-код с реквизитами платежа",
			FieldNames: []string{"payment"}, Checks: []string{"реквизиты не помещаются в QR-код"}}
	}
	code.Scale = requisitesQRScale
	return code.PNG(), nil
}

// wantsPNG reads the answer format: ?format= decides when present (png or
// json); otherwise an Accept header that names image/png and not
// application/json asks for the image, so a client that accepts both, or
// anything, keeps the JSON answer of the other operations.
func wantsPNG(r *http.Request) (bool, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "png":
		return true, nil
	case "json":
		return false, nil
	case "":
	default:
		return false, &banking.Error{Kind: banking.KindValidation, Message: "Неизвестный формат ответа",
			FieldNames: []string{"format"}, Checks: []string{"допустимы png и json"}}
	}
	png, json := false, false
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		// A weight of 0 in any spelling (0.0, 0.000) refuses the type,
		// as acceptWeights reads it for the JWS answers.
		if q, named := params["q"]; err != nil || (named && qValue(q) == 0) {
			continue
		}
		png = png || mt == "image/png"
		json = json || mt == "application/json"
	}
	return png && !json, nil
}

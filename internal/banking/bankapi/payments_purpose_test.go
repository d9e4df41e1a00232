package bankapi

import (
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A single tax payment (ЕНП) may leave its purpose empty (reference §5.6);
// any other payment order without one is 400 VALIDATION_FAULT naming
// purpose, a budget payment to another administrator and an ЕНП KBK on an
// ordinary payee's account too.
func TestPaymentsPurposeOfENP(t *testing.T) {
	e := newPayEnv(t)
	customs := customsPayee(nil)
	for i, tc := range []struct {
		name   string
		over   map[string]any
		status int
	}{
		{"ЕНП without purpose", merge(treasuryPayee(enpBlock(nil)), map[string]any{"purpose": nil}), 201},
		{"ЕНП with an empty purpose", merge(treasuryPayee(enpBlock(nil)), map[string]any{"purpose": ""}), 201},
		{"ЕНП with purpose 0", merge(treasuryPayee(enpBlock(nil)), map[string]any{"purpose": "0"}), 201},
		{"ЕНП with a purpose", treasuryPayee(enpBlock(nil)), 201},
		{"ordinary payment without purpose", map[string]any{"purpose": nil}, 400},
		{"ordinary payment with an empty purpose", map[string]any{"purpose": ""}, 400},
		{"customs payment without purpose", merge(customs, map[string]any{"purpose": nil}), 400},
		{"ЕНП KBK to an ordinary account without purpose", map[string]any{"departmentalInfo": enpBlock(nil), "purpose": nil}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(1600+i), tc.over))
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st == 201 && m["bankStatus"] != "CREATED" {
				t.Fatalf("stored as %s", raw)
			}
			if st == 400 && (m["cause"] != "VALIDATION_FAULT" || !strings.Contains(raw, `"purpose"`)) {
				t.Fatalf("refusal %s", raw)
			}
		})
	}
}

// The QR confirmation's refusals that the reference quotes from the
// provider's sandbox (§7) are answered in its words.
func TestPaymentsQRConfirmationTexts(t *testing.T) {
	e := newPayEnv(t)
	unknown := newUUID(1650)
	for _, tc := range []struct {
		name, id string
		status   int
		message  string
	}{
		{"not OTP", banking.QRSandboxNotOTP, http.StatusBadRequest,
			"Подтверждение по QR-коду доступно только пользователям с типом средства подписи OneTimePassword"},
		{"unknown document", unknown, http.StatusNotFound,
			"Невозможно сформировать QR-код по несуществующему платежному документу с внешним идентификатором " + unknown + "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, raw := e.do("POST", paymentsBase+"/qr-confirmation", "pay", `{"externalDocIds":["`+tc.id+`"]}`)
			if st != tc.status || m["message"] != tc.message {
				t.Fatalf("%d %s, want %d %q", st, raw, tc.status, tc.message)
			}
		})
	}
}

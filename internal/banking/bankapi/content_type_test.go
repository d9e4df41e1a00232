package bankapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A JSON body is read only under a JSON Content-Type (or none, which
// clients that set none mean as JSON). Anything else is request data in a
// wrong format, 400 DESERIALIZATION_FAULT (reference §13), and nothing is
// stored: the reference's only 415 is JWS_EXCEPTED, for card-limit
// requests that must be signed (§1, §9.6). This server has no JWS
// verifier, so an application/jose body is refused like the rest; with one
// it is opened (payments_jose_test.go), and a JSON body sent under that
// type is still DESERIALIZATION_FAULT there, not being a JWS.
func TestBankingBodyContentType(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range []struct {
		name, path, ctype string
		status            int
		cause             string
	}{
		{"payment as JSON", paymentsBase, "application/json", 201, ""},
		{"payment as JSON with a charset", paymentsBase, "application/json; charset=utf-8", 201, ""},
		{"payment without a Content-Type", paymentsBase, "", 201, ""},
		{"payment as a +json type", paymentsBase, "application/vnd.partner+json", 201, ""},
		{"payment as text", paymentsBase, "text/plain", 400, "DESERIALIZATION_FAULT"},
		{"payment as a form", paymentsBase, "application/x-www-form-urlencoded", 400, "DESERIALIZATION_FAULT"},
		{"payment as JWS", paymentsBase, "application/jose", 400, "DESERIALIZATION_FAULT"},
		{"payment under a malformed type", paymentsBase, "application/", 400, "DESERIALIZATION_FAULT"},
		{"invoice draft as JSON", paymentsBase + "/from-invoice", "application/json", 201, ""},
		{"invoice draft as text", paymentsBase + "/from-invoice", "text/plain", 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(900 + i)
			body, token := payDoc(id, nil), "pay"
			if strings.HasSuffix(tc.path, "/from-invoice") {
				body, token = invoiceDraft(id, nil), "inv"
			}
			req, _ := http.NewRequest("POST", e.srv.URL+tc.path, strings.NewReader(body))
			req.Header.Set("Authorization", token)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var eb errorBody
			_ = json.Unmarshal(raw, &eb)
			if resp.StatusCode != tc.status || eb.Cause != tc.cause {
				t.Fatalf("%d %s, want %d %q", resp.StatusCode, raw, tc.status, tc.cause)
			}
			if tc.status != 201 {
				if st, _, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); st != 404 {
					t.Fatalf("a refused body was stored: %d %s", st, raw)
				}
			}
		})
	}
}

// Card-limit requests: JSON or JWS; a body of another type is
// DESERIALIZATION_FAULT as on the payment routes.
func TestCardLimitBodyContentType(t *testing.T) {
	e := newCardEnv(t, 10)
	ext := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", 700+i) }
	for i, tc := range []struct {
		ctype  string
		status int
		cause  string
	}{
		{"application/json", 201, ""},
		{"", 201, ""},
		{"text/plain", 400, "DESERIALIZATION_FAULT"},
		{"application/x-www-form-urlencoded", 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(fmt.Sprintf("%q", tc.ctype), func(t *testing.T) {
			st, body := e.do("POST", "/fintech/api/v1/business-cards/limits", tc.ctype, limitBody("sbc-00001", ext(i), "10"))
			if st != tc.status || cause(body) != tc.cause {
				t.Fatalf("%d %s, want %d %q", st, body, tc.status, tc.cause)
			}
		})
	}
}

// A wrong method on a path the API serves is 405 naming the path's methods
// (RFC 9110 §15.5.6) in the banking envelope. The reference's causes (§13)
// have none for it, so the cause is NOT_FOUND, an unknown path's, which
// clients that switch on the documented causes know; the message names
// the method, not a missing resource.
func TestBankingWrongMethod(t *testing.T) {
	e := newPayEnv(t)
	for _, tc := range []struct {
		method, path, allow string
		status              int
		message             string
	}{
		{"PUT", paymentsBase, "POST", 405, "Метод PUT не поддерживается для этого ресурса"},
		{"DELETE", paymentsBase + "/" + newUUID(1), "GET", 405, "Метод DELETE не поддерживается для этого ресурса"},
		{"GET", paymentsBase + "/qr-confirmation", "POST", 405, "Метод GET не поддерживается для этого ресурса"},
		{"GET", paymentsBase + "/" + newUUID(1) + "/nowhere", "", 404, "Ресурс не найден"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, e.srv.URL+tc.path, nil)
			req.Header.Set("Authorization", "pay")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb errorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || eb.Cause != "NOT_FOUND" || eb.Message != tc.message || eb.ReferenceID == "" {
				t.Fatalf("%d %+v", resp.StatusCode, eb)
			}
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Fatalf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}

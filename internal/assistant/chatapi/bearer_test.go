package chatapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"partnerapi/internal/assistant"
)

// TestBearerScheme checks the Authorization forms /api/v1 accepts: "Bearer
// <token>" (reference §2), the scheme in any letter case (RFC 7235 makes it
// case-insensitive, and some clients send "bearer"). A bare token, another
// scheme, a scheme without a token or a token with white space other than
// SP and HTAB around it is 401 in the API's envelope, as a
// missing token is: no client of the provider sends a token without its
// scheme.
func TestBearerScheme(t *testing.T) {
	f := newFixture(t)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	tests := []struct {
		name, header string
		status       int
	}{
		{"Bearer", "Bearer " + tok, 200},
		{"lower case", "bearer " + tok, 200},
		{"upper case, two spaces", "BEARER  " + tok, 200},
		{"bare token", tok, 401},
		{"bare token after spaces", "  " + tok, 401},
		{"scheme glued to the token", "Bearer" + tok, 401},
		{"Basic", "Basic " + tok, 401},
		{"scheme alone", "Bearer", 401},
		// Only SP and HTAB are white space around the token (RFC 9110
		// §5.6.3, RFC 6750 §2.1); Unicode spaces are part of the value.
		{"tabs and spaces", "Bearer \t" + tok + " \t", 200},
		{"trailing NBSP", "Bearer " + tok + "\u00a0", 401},
		{"leading NBSP", "\u00a0Bearer " + tok, 401},
		{"NBSP after the scheme", "Bearer\u00a0" + tok, 401},
		{"trailing ideographic space", "Bearer " + tok + "\u3000", 401},
		{"trailing NEL", "Bearer " + tok + "\u0085", 401},
		{"token and more", "Bearer " + tok + " x", 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", f.url+"/api/v1/models", nil)
			req.Header.Set("Authorization", tc.header)
			resp, body := f.do(req)
			if resp.StatusCode != tc.status {
				t.Fatalf("%q: status %d %s, want %d", tc.header, resp.StatusCode, body, tc.status)
			}
			var e struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
			}
			if tc.status == 401 && (json.Unmarshal(body, &e) != nil || e.Status != 401 || e.Message != "Unauthorized") {
				t.Fatalf("%q: body %s, want the envelope's Unauthorized", tc.header, body)
			}
		})
	}
}

package bankapi

import (
	"net/http/httptest"
	"testing"
)

// TestWantsPNGWeights: a weight of 0 refuses a type however it is written
// (RFC 9110 §12.4.2: 0, 0., 0.0, 0.000), so application/json;q=0.0 does not
// keep the JSON answer and image/png;q=0.000 does not ask for the image
// (found by FuzzQRAccept).
func TestWantsPNGWeights(t *testing.T) {
	for _, c := range []struct {
		accept string
		png    bool
	}{
		{"image/png", true},
		{"image/png, application/json", false},
		{"image/png, application/json;q=0", true},
		{"image/png, application/json;q=0.0", true},
		{"image/png, application/json; q=0.000", true},
		{"image/png, application/json;q=0.001", false},
		{"image/png;q=0", false},
		{"image/png;q=0.000", false},
		{"image/png;q=0.", false},
		{"image/png;q=0.5", true},
		{"image/png;q=bogus", true},
	} {
		r := httptest.NewRequest("GET", "/fintech/api/v1/payments/x/requisites-qr", nil)
		r.Header.Set("Accept", c.accept)
		if got, err := wantsPNG(r); err != nil || got != c.png {
			t.Errorf("Accept %q: wantsPNG = %v, %v; want %v", c.accept, got, err, c.png)
		}
	}
}

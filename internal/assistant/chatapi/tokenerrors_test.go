package chatapi

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// TestTokenEndpointEnvelope checks that every error of the token endpoint,
// the platform's and the store's too, comes in its envelope {code,
// message} (reference §1), never in the API's {status, message}.
func TestTokenEndpointEnvelope(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	c := f.client(assistant.ScopeCorp)
	// A form over the 1 MiB body limit, declared (refused before the
	// handler) and streamed without a length (refused while parsing).
	big := url.Values{"scope": {"ASSISTANT_API_CORP"}, "pad": {strings.Repeat("x", 2<<20)}}.Encode()
	post := func(body io.Reader) *http.Request {
		req, _ := http.NewRequest("POST", f.url+"/api/v2/oauth", body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Basic "+c.AuthorizationKey)
		req.Header.Set("RqUID", rqUID)
		return req
	}
	get, _ := http.NewRequest("GET", f.url+"/api/v2/oauth", nil)
	tests := []struct {
		name   string
		req    *http.Request
		status int
		want   string
	}{
		{"body over the limit", post(strings.NewReader(big)), 413, `{"code":413,"message":"Payload too large"}`},
		{"streamed body over the limit", post(io.MultiReader(strings.NewReader(big))), 413, `{"code":413,"message":"Payload too large"}`},
		{"wrong method", get, 405, `{"code":405,"message":"Method Not Allowed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(tt.req)
			if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	t.Run("store failure", func(t *testing.T) {
		if err := f.closeStore(); err != nil {
			t.Fatal(err)
		}
		resp, body := f.oauth("Basic "+c.AuthorizationKey, rqUID, url.Values{"scope": {"ASSISTANT_API_CORP"}})
		if want := `{"code":500,"message":"Internal Server Error"}`; resp.StatusCode != 500 || strings.TrimSpace(string(body)) != want {
			t.Fatalf("got %d %s, want 500 %s", resp.StatusCode, body, want)
		}
	})
}

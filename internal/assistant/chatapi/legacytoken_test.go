package chatapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// legacyToken sends POST /api/v1/token as the npm client does with user
// and password: Basic user:password and no body.
func (f *fixture) legacyToken(method, auth string) (*http.Response, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.url+"/api/v1/token", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return f.do(req)
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestLegacyToken drives the legacy password flow over HTTP: a token as
// {"tok", "exp"} that the API takes, and every refusal in the API's
// {status, message} (legacyTokenError says why not the OAuth envelope).
func TestLegacyToken(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	c := f.client(assistant.ScopeCorp)
	unauthorized := `{"status":401,"message":"Unauthorized"}`
	tests := []struct {
		name, method, auth string
		status             int
		want               string // the body of a refusal
	}{
		{"good", "POST", basicAuth(c.ClientID, c.ClientSecret), 200, ""},
		{"wrong password", "POST", basicAuth(c.ClientID, "not-the-secret"), 401, unauthorized},
		{"unknown user", "POST", basicAuth("c757a9c5-de04-498f-baa3-efcc54de7853", c.ClientSecret), 401, unauthorized},
		{"no Authorization", "POST", "", 401, unauthorized},
		{"not Base64", "POST", "Basic %%%", 401, unauthorized},
		{"no colon", "POST", "Basic " + base64.StdEncoding.EncodeToString([]byte(c.ClientID)), 401, unauthorized},
		{"bearer", "POST", "Bearer " + c.AuthorizationKey, 401, unauthorized},
		{"wrong method", "GET", basicAuth(c.ClientID, c.ClientSecret), 405, `{"status":405,"message":"Method Not Allowed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.legacyToken(tt.method, tt.auth)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.status != 200 {
				if got := strings.TrimSpace(string(body)); got != tt.want {
					t.Fatalf("got %s, want %s", got, tt.want)
				}
				return
			}
			var tok map[string]any
			if err := json.Unmarshal(body, &tok); err != nil || len(tok) != 2 {
				t.Fatalf("not {tok, exp}: %s", body)
			}
			s, _ := tok["tok"].(string)
			exp, _ := tok["exp"].(float64)
			if d := time.Until(time.UnixMilli(int64(exp))); d < 29*time.Minute || d > 31*time.Minute {
				t.Errorf("exp %v is %v away, want 30 minutes in milliseconds", tok["exp"], d)
			}
			if resp.Header.Get("Pragma") != "no-cache" {
				t.Errorf("no no-store headers: %v", resp.Header)
			}
			if resp, body := f.call("GET", "/api/v1/models", s, ""); resp.StatusCode != 200 {
				t.Errorf("the token is refused: %d %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("token rate", func(t *testing.T) {
		c := f.client(assistant.ScopeB2B)
		var resp *http.Response
		var body []byte
		for range 11 {
			resp, body = f.legacyToken("POST", basicAuth(c.ClientID, c.ClientSecret))
		}
		if resp.StatusCode != 429 || strings.TrimSpace(string(body)) != `{"status":429,"message":"Too Many Requests"}` || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("11th token in a second: %d %s %v", resp.StatusCode, body, resp.Header)
		}
	})
	t.Run("store failure", func(t *testing.T) {
		if err := f.closeStore(); err != nil {
			t.Fatal(err)
		}
		resp, body := f.legacyToken("POST", basicAuth(c.ClientID, c.ClientSecret))
		if want := `{"status":500,"message":"Internal Server Error"}`; resp.StatusCode != 500 || strings.TrimSpace(string(body)) != want {
			t.Fatalf("got %d %s, want 500 %s", resp.StatusCode, body, want)
		}
	})
}

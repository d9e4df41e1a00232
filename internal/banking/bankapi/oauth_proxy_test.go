package bankapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/web"
)

// TestOAuthLoginThrottleBehindProxy drives the login throttle through the
// platform, as serve builds it, with every request arriving from one
// reverse proxy (the test's loopback peer). Trusting that proxy, failures
// are counted by the client address it forwards: a guesser is throttled
// whatever it writes into X-Forwarded-For itself, and a user behind the
// same proxy still signs in. Trusting no one (the default), the header is
// ignored: a guesser cannot get a fresh count by writing a new address into
// it each time, and everyone behind the proxy shares the proxy's count.
func TestOAuthLoginThrottleBehindProxy(t *testing.T) {
	const guesser, user = "198.51.100.66", "198.51.100.7"
	for _, tc := range []struct {
		name    string
		trusted string
		// guess is the X-Forwarded-For of the guesser's i-th attempt.
		guess func(i int) string
		// guesserStopped: the guesser's sixth attempt, with the right
		// password, is refused; userThrottled: so is the user's.
		guesserStopped, userThrottled bool
	}{
		{name: "trusted proxy", trusted: "127.0.0.1/32", guess: func(int) string { return guesser },
			guesserStopped: true, userThrottled: false},
		{name: "trusted proxy, guesser forges entries", trusted: "127.0.0.1/32",
			guess:          func(i int) string { return fmt.Sprintf("203.0.113.%d, 10.0.0.1, %s", i+1, guesser) },
			guesserStopped: true, userThrottled: false},
		{name: "no trusted proxies", trusted: "", guess: func(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) },
			guesserStopped: true, userThrottled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newIDEnv(t)
			e.addApp(t)
			proxies, err := web.ParseTrustedProxies(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			srv := NewServer(Deps{Auth: e.id, Identity: e.id})
			platform := web.Platform{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), TrustedProxies: proxies}
			ts := httptest.NewServer(web.API{Name: "banking", Handler: srv, Errors: srv.ErrorWriter()}.BuildOn(platform))
			defer ts.Close()
			login := func(xff string, mod map[string]string) (int, string, string) {
				t.Helper()
				form := authorizeForm(mod)
				req, _ := http.NewRequest("POST", ts.URL+"/ic/sso/api/v2/oauth/authorize", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("X-Forwarded-For", xff)
				resp, err := noRedirect().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, resp.Header.Get("Location"), string(body)
			}
			for i := 0; i < 5; i++ {
				if _, _, body := login(tc.guess(i), map[string]string{"password": "wrong"}); !strings.Contains(body, "Неверный логин") {
					t.Fatalf("attempt %d: %s", i, body)
				}
			}
			throttled := func(who, xff string) bool {
				st, loc, body := login(xff, nil) // the right password
				switch {
				case st == http.StatusOK && strings.Contains(body, "Слишком много"):
					return true
				case st == http.StatusFound && strings.Contains(loc, "code="):
					return false
				}
				t.Fatalf("%s: %d %s %.200s", who, st, loc, body)
				return false
			}
			if got := throttled("guesser", tc.guess(5)); got != tc.guesserStopped {
				t.Errorf("guesser throttled = %v, want %v", got, tc.guesserStopped)
			}
			if got := throttled("user", user); got != tc.userThrottled {
				t.Errorf("user behind the same proxy throttled = %v, want %v", got, tc.userThrottled)
			}
		})
	}
}

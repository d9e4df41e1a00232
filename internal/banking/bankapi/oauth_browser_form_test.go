package bankapi

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestOAuthLoginFormAsABrowserPostsIt submits the login page the way a
// browser does. A form without an action is posted to the page's own URL,
// the authorize request's query string included (HTML's form submission: a
// POST keeps the action URL's query), and the body carries the same
// parameters again as the form's hidden fields. That is one parameter in
// two places of one submission, not a parameter a client repeated (RFC 6749
// §3.1), and the user must get the code: before, every browser login was 400
// invalid_request "parameter ... is included more than once".
func TestOAuthLoginFormAsABrowserPostsIt(t *testing.T) {
	e := newIDEnv(t)
	e.addApp(t)
	query := authorizeForm(map[string]string{"login": "", "password": "", "consent": ""}).Encode()
	page := e.srv.URL + "/ic/sso/api/v2/oauth/authorize?" + query
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	pageHTML, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("page: %d %s", resp.StatusCode, pageHTML)
	}
	// A browser posts to the form's action resolved against the page's URL,
	// or to that URL itself when the form names none.
	target := page
	if m := regexp.MustCompile(`<form[^>]*\saction="([^"]*)"`).FindSubmatch(pageHTML); m != nil {
		base, _ := url.Parse(page)
		ref, err := url.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			t.Fatal(err)
		}
		target = base.ResolveReference(ref).String()
	}
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllSubmatch(pageHTML, -1) {
		form.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	if form.Get("client_id") != oaClient || form.Get("code_challenge") == "" {
		t.Fatalf("hidden fields %v", form)
	}
	form.Set("login", "sandbox")
	form.Set("password", "sandbox")
	form.Set("consent", "allow")

	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"the page's query and its form", form.Encode(), http.StatusFound},
		// A parameter repeated within the body is still the client's
		// repetition, refused as before.
		{"state twice in the body", form.Encode() + "&state=other", http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", target, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, c.status)
			}
			if c.status != http.StatusFound {
				return
			}
			loc, _ := url.Parse(resp.Header.Get("Location"))
			code := loc.Query().Get("code")
			if code == "" || loc.Query().Get("state") != "xyz" {
				t.Fatalf("redirect %s", loc)
			}
			if st, m := e.tokenCall(t, "/ic/sso/api/v2/oauth/token", codeForm(code, oaVerifier)); st != 200 || m["access_token"] == nil {
				t.Fatalf("token: %d %v", st, m)
			}
		})
	}
}

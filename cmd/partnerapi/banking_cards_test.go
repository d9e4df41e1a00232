package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

func runCardsCLI(t *testing.T, ts *testServer, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := runBanking(context.Background(), append(args, "--data-dir", ts.dataDir),
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatalf("banking %v: %v", args, err)
	}
	return out.String()
}

// Cards end to end: the real Authenticator (token from the CLI), the
// sandbox SignatureVerifier, IDENTITY's offer records and the seeded cards.
func TestBankingCardsEndToEnd(t *testing.T) {
	ts := startServer(t)
	base := ts.urls["banking"] + "/fintech/api"
	tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
	call := func(method, path, ctype, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	type page struct {
		Links         []struct{ Href, Rel string }
		BusinessCards []banking.CardView
	}
	var seen []banking.CardView
	for p := 1; ; p++ {
		code, body := call("GET", "/v1/business-cards?page="+string(rune('0'+p)), "", "")
		if code != 200 {
			t.Fatalf("page %d: %d %s", p, code, body)
		}
		var pg page
		_ = json.Unmarshal([]byte(body), &pg)
		seen = append(seen, pg.BusinessCards...)
		if len(pg.Links) == 0 || pg.Links[len(pg.Links)-1].Rel != "next" {
			break
		}
	}
	// 250 seeded cards over three accounts; the third has no offer.
	if len(seen) != 167 {
		t.Fatalf("listed %d cards, want 167", len(seen))
	}
	for _, c := range seen {
		if c.AccountNumber == sandboxNoOfferAccount || !strings.Contains(c.CardPan, "******") {
			t.Fatalf("card %+v", c)
		}
	}
	limit := func(card, ext, amount string, sigs ...string) string {
		m := map[string]any{"code": "NON_RENEW", "businessCardId": card, "externalId": ext, "limit": json.Number(amount)}
		var ds []map[string]string
		for _, s := range sigs {
			ds = append(ds, map[string]string{"base64Encoded": "MIIB", "certificateUuid": s})
		}
		if ds != nil {
			m["digestSignatures"] = ds
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	// sbc-00001 ACTIVE on the first offer account; sbc-00003 is on the
	// no-offer account; sbc-00002 BLOCKED.
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"signed", limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000001", "1000", banking.SandboxCertSole), 201, `"bankStatus":"EXPORTED"`},
		{"draft", limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000002", "5"), 201, `"bankStatus":"CREATED"`},
		{"duplicate", limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000002", "5"), 400, "WORKFLOW_FAULT"},
		{"no offer", limit("sbc-00003", "5e0c1a2b-0000-4000-8000-000000000003", "5"), 400, "WORKFLOW_FAULT"},
		{"blocked", limit("sbc-00002", "5e0c1a2b-0000-4000-8000-000000000004", "5"), 400, "WORKFLOW_FAULT"},
		{"unknown", limit("nope", "5e0c1a2b-0000-4000-8000-000000000005", "5"), 404, "CARD_ID_NOT_FOUND"},
	} {
		if code, body := call("POST", "/v1/business-cards/limits", "application/json", tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s", tc.name, code, body)
		}
	}
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	jws, _ := gost.SignJWS([]byte(limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000006", "1")), banking.SandboxCertSole, key)
	if code, body := call("POST", "/v1/business-cards/limits", "application/jose", jws); code != 201 {
		t.Errorf("JWS: %d %s", code, body)
	}
	if code, body := call("GET", "/v1/business-cards/limits/5e0c1a2b-0000-4000-8000-000000000006/state", "", ""); code != 200 || !strings.Contains(body, "API_JWS") {
		t.Errorf("state: %d %s", code, body)
	}
	// The CLI sees the limit, moves the sandbox clock and sees it end.
	if out := runCardsCLI(t, ts, "card", "list", "--status", "ACTIVE"); !strings.Contains(out, `"effectiveLimit":1000.00`) {
		t.Fatalf("card list: %.400s", out)
	}
	runCardsCLI(t, ts, "clock", "advance", "49h")
	if out := runCardsCLI(t, ts, "card", "list", "--status", "ACTIVE"); strings.Contains(out, "effectiveLimit") || strings.Contains(out, "2202201") {
		t.Fatalf("after 49h: %.400s", out)
	}
	// The organisation's limit setting off, the running server refuses an
	// application as reference §11 says; on again, it takes it.
	if out := runCardsCLI(t, ts, "card", "limit-setting", "--state", "off"); !strings.Contains(out, `"cardLimits":"off"`) {
		t.Fatalf("limit-setting off: %s", out)
	}
	if code, body := call("POST", "/v1/business-cards/limits", "application/json", limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000007", "5")); code != 400 || !strings.Contains(body, "WORKFLOW_FAULT") {
		t.Errorf("setting off: %d %s", code, body)
	}
	runCardsCLI(t, ts, "card", "limit-setting", "--state", "on")
	if code, body := call("POST", "/v1/business-cards/limits", "application/json", limit("sbc-00001", "5e0c1a2b-0000-4000-8000-000000000007", "5")); code != 201 {
		t.Errorf("setting on again: %d %s", code, body)
	}
	if out := runCardsCLI(t, ts, "card", "set-status", "--id", "sbc-00001", "--status", "BLOCKED"); !strings.Contains(out, `"status":"BLOCKED"`) {
		t.Fatalf("set-status: %s", out)
	}
	out := runCardsCLI(t, ts, "card", "add", "--id", "cli-1", "--account", banking.SandboxAccount, "--pan", "2202200000000001", "--holder", "PETR SIDOROV")
	if !strings.Contains(out, `"cardPan":"220220******0001"`) || strings.Contains(out, "SIDOROV") {
		t.Fatalf("card add: %s", out)
	}
}

// A partner marked as JWS-only gets 415 JWS_EXCEPTED for plain JSON.
func TestBankingCardsJWSRequired(t *testing.T) {
	ts := startServer(t, "--banking-jws-required-clients", banking.SandboxClientID)
	tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
	body := `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"5e0c1a2b-0000-4000-8000-000000000001","limit":1}`
	for _, tc := range []struct {
		ctype, body string
		code        int
		want        string
	}{
		{"application/json", body, 415, "JWS_EXCEPTED"},
		{"application/jose", "eyJhbGciOiJnb3N0MzQuMTAtMjAxMiJ9.e30.AAAA", 400, "WORKFLOW_FAULT"}, // {"alg":"gost34.10-2012"}: no kid
	} {
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/business-cards/limits", strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", tc.ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s", tc.ctype, resp.StatusCode, b)
		}
	}
}

// A JWS under a real certificate registered with `banking cert add` is
// verified by signature (not by the sandbox uuid list); a forged one is not.
func TestBankingCardsJWSRegisteredCertificate(t *testing.T) {
	ts := startServer(t)
	tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	cert, err := gost.SelfSignedCertificate(key, "partner user", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.der")
	if err := os.WriteFile(file, cert.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	const kid = "6a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d"
	runCardsCLI(t, ts, "cert", "add", "--user", banking.SandboxUserID, "--cert", file, "--uuid", kid)
	other, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	payload := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"5e0c1a2b-0000-4000-8000-%012d","limit":3}`, n))
	}
	good, _ := gost.SignJWS(payload(1), kid, key)
	forged, _ := gost.SignJWS(payload(2), kid, other)
	for _, tc := range []struct {
		body string
		code int
		want string
	}{{good, 201, "CREATED"}, {forged, 400, "SIGN_CHECK_EXCEPTION"}} {
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/business-cards/limits", strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/jose")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%d %s, want %d %s", resp.StatusCode, b, tc.code, tc.want)
		}
	}
}

// unsized hides a reader's length, so the client sends the body chunked
// and only reading it finds it too large.
type unsized struct{ io.Reader }

// A chunked body over the platform's limit, which no Content-Length
// refuses up front, is answered 413 in the banking envelope by the
// operations that read it, with the request's own id as its referenceId,
// so the answer leads to the access log line.
func TestBankingStreamedBodyTooLarge(t *testing.T) {
	ts := startServer(t)
	for path, scope := range map[string]string{"/v1/business-cards/limits": banking.ScopeBusinessCardLimit, "/v1/payments": banking.ScopePayDocRU} {
		tok := bankingToken(t, ts, scope)
		body := unsized{io.MultiReader(strings.NewReader(`{"pad":"`), strings.NewReader(strings.Repeat("x", 2<<20)), strings.NewReader(`"}`))}
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api"+path, body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Cause, ReferenceID string }
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || err != nil || e.Cause != "VALIDATION_FAULT" {
			t.Errorf("%s: %d %+v %v", path, resp.StatusCode, e, err)
		}
		if id := resp.Header.Get("X-Request-Id"); id == "" || e.ReferenceID != id {
			t.Errorf("%s: referenceId %q, request id %q", path, e.ReferenceID, id)
		}
	}
}

package main

import (
	"crypto/rand"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// cardLimit is a NON_RENEW limit-change application for a seeded card.
func cardLimit(card, id string, limit any, certs ...string) string {
	m := map[string]any{"code": "NON_RENEW", "businessCardId": card, "externalId": id, "limit": limit}
	if certs != nil {
		m["digestSignatures"] = signatures(certs...)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// limitSign is the body of a limit application's later signing.
func limitSign(certs ...string) string {
	b, _ := json.Marshal(map[string]any{"digestSignatures": signatures(certs...)})
	return string(b)
}

// cardCases covers business cards and their limits (reference §11, §9.6).
// The seed has sbc-00001 ACTIVE on an offer account, sbc-00002 BLOCKED and
// sbc-00003 on the account without an offer. The clock rows come last:
// they move the sandbox time on which limits expire.
func cardCases(t *testing.T) []bankCase {
	const (
		cards  = "/fintech/api/v1/business-cards"
		limits = cards + "/limits"
		l1     = "5e0c1a2b-0000-4000-8000-0000000000a1"
	)
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// In the sandbox the kid, one of the fixed certificates, decides the
	// outcome whichever key signed (reference §7).
	jws, err := gost.SignJWS([]byte(cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a6", 1)), banking.SandboxCertSole, key)
	if err != nil {
		t.Fatal(err)
	}
	// Signing later (ours) by JWS: a draft of its own, completed by the
	// sole authority's signature in a body the kid's key signed.
	const jwsDraft = "5e0c1a2b-0000-4000-8000-0000000000a8"
	jwsSign, err := gost.SignJWS([]byte(limitSign(banking.SandboxCertSole)), banking.SandboxCertSole, key)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(id string) string { return limits + "/" + id + "/sign" }
	return []bankCase{
		{name: "list", method: "GET", path: cards, auth: "cards", status: 200},
		// The contract can say only one of the two forms reference §11
		// allows for statusCodes; it says repeated, which generated
		// clients send.
		{name: "list page 2 by status", method: "GET", path: cards + "?page=2&statusCodes=ACTIVE&statusCodes=NOT_DELIVERED", auth: "cards", status: 200},
		{name: "list past the last page", method: "GET", path: cards + "?page=9", auth: "cards", status: 200},
		{name: "list page not a number", method: "GET", path: cards + "?page=x", auth: "cards", status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "list without token", method: "GET", path: cards, status: 401, badRequest: true},
		{name: "list bad token", method: "GET", path: cards, auth: "bad", status: 401, cause: "UNAUTHORIZED"},
		{name: "list without scope", method: "GET", path: cards, auth: "pay", status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		// Reference §15 #3: a sample lists cards with POST; both are served.
		{name: "list by POST", method: "POST", path: cards + "?page=1", auth: "cards", status: 200},
		{name: "list by POST page not a number", method: "POST", path: cards + "?page=x", auth: "cards", status: 400, badRequest: true},
		{name: "list by POST without token", method: "POST", path: cards, status: 401, badRequest: true},
		{name: "list by POST without scope", method: "POST", path: cards, auth: "pay", status: 403},
		// Gated like the payment operations; GET and POST are one
		// operation with one budget.
		{name: "list over the rate limit", server: "limited", method: "GET", path: cards, auth: "limited cards", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "list by POST over the rate limit", server: "limited", method: "POST", path: cards, auth: "limited cards", status: 429, cause: "TOO_MANY_REQUESTS"},
		{name: "list in maintenance", server: "maint", method: "GET", path: cards, auth: "maint cards", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
		{name: "list by POST in maintenance", server: "maint", method: "POST", path: cards, auth: "maint cards", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},

		{name: "limit signed", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", l1, 1000, banking.SandboxCertSole), status: 201},
		{name: "limit draft", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a2", 0), status: 201},
		{name: "limit first signature", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a3", 5.5, banking.SandboxCertFirst), status: 201},
		{name: "limit JWS", method: "POST", path: limits, auth: "cards", ctype: "application/jose", body: jws, status: 201},
		{name: "limit JWS without kid", method: "POST", path: limits, auth: "cards", ctype: "application/jose", body: "eyJhbGciOiJnb3N0MzQuMTAtMjAxMiJ9.e30.AAAA", status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit duplicate", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", l1, 1000, banking.SandboxCertSole), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit blocked card", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00002", "5e0c1a2b-0000-4000-8000-0000000000a4", 5), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit card without offer", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00003", "5e0c1a2b-0000-4000-8000-0000000000a4", 5), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit not JSON", method: "POST", path: limits, auth: "cards", body: `{"code":`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		{name: "limit negative", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", -1), status: 400, badRequest: true},
		{name: "limit unknown card", method: "POST", path: limits, auth: "cards", body: cardLimit("nope", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 404, cause: "CARD_ID_NOT_FOUND"},
		{name: "limit without token", method: "POST", path: limits, body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 401, badRequest: true},
		{name: "limit without scope", method: "POST", path: limits, auth: "pay", body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 403},
		{name: "limit unsigned where JWS is required", server: "limited", method: "POST", path: limits, auth: "limited cards",
			body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 415, cause: "JWS_EXCEPTED"},
		{name: "limit over the rate limit", server: "limited", method: "POST", path: limits, auth: "limited cards",
			body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "limit in maintenance", server: "maint", method: "POST", path: limits, auth: "maint cards",
			body: cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a5", 5), status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},

		{name: "limit over the body limit", method: "POST", path: limits, auth: "cards", body: overLimit(cardLimit("sbc-00001", "5e0c1a2b-0000-4000-8000-0000000000a7", 5)),
			status: 413, cause: "VALIDATION_FAULT"},
		{name: "limit state", method: "GET", path: limits + "/" + l1 + "/state", auth: "cards", status: 200},
		{name: "limit state JWS", method: "GET", path: limits + "/5e0c1a2b-0000-4000-8000-0000000000a6/state", auth: "cards", status: 200},
		{name: "limit state unknown", method: "GET", path: limits + "/5e0c1a2b-0000-4000-8000-0000000000ff/state", auth: "cards", status: 404},
		{name: "limit state not a UUID", method: "GET", path: limits + "/42/state", auth: "cards", status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "limit state without token", method: "GET", path: limits + "/" + l1 + "/state", status: 401, badRequest: true},
		{name: "limit state without scope", method: "GET", path: limits + "/" + l1 + "/state", auth: "pay", status: 403},
		{name: "limit state over the rate limit", server: "limited", method: "GET", path: limits + "/" + l1 + "/state", auth: "limited cards", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "limit state in maintenance", server: "maint", method: "GET", path: limits + "/" + l1 + "/state", auth: "maint cards", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},

		// Signing later (ours): the draft a2 takes the first signature, the
		// partly signed a3 its second.
		{name: "limit sign second", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a3"), auth: "cards", body: limitSign(banking.SandboxCertSecond), status: 200},
		{name: "limit sign draft first", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "cards", body: limitSign(banking.SandboxCertFirst), status: 200},
		{name: "limit draft to sign by JWS", method: "POST", path: limits, auth: "cards", body: cardLimit("sbc-00001", jwsDraft, 7), status: 201},
		{name: "limit sign JWS", method: "POST", path: sign(jwsDraft), auth: "cards", ctype: "application/jose", body: jwsSign, status: 200},
		{name: "limit sign in force", method: "POST", path: sign(l1), auth: "cards", body: limitSign(banking.SandboxCertSole), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit sign role twice", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "cards", body: limitSign(banking.SandboxCertFirst), status: 400, cause: "WORKFLOW_FAULT"},
		{name: "limit sign without signatures", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "cards", body: `{"digestSignatures":[]}`,
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "limit sign not JSON", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "cards", body: `{"digestSignatures":`,
			status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
		{name: "limit sign unknown", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000ff"), auth: "cards", body: limitSign(banking.SandboxCertSole), status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
		{name: "limit sign not a UUID", method: "POST", path: sign("42"), auth: "cards", body: limitSign(banking.SandboxCertSole), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "limit sign without token", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), body: limitSign(banking.SandboxCertSecond), status: 401, badRequest: true},
		{name: "limit sign without scope", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "pay", body: limitSign(banking.SandboxCertSecond), status: 403},
		{name: "limit sign over the body limit", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "cards", body: overLimit(limitSign(banking.SandboxCertSecond)),
			status: 413, cause: "VALIDATION_FAULT"},
		{name: "limit sign unsigned where JWS is required", server: "limited", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "limited cards",
			body: limitSign(banking.SandboxCertSecond), status: 415, cause: "JWS_EXCEPTED"},
		{name: "limit sign over the rate limit", server: "limited", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "limited cards",
			body: limitSign(banking.SandboxCertSecond), status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "limit sign in maintenance", server: "maint", method: "POST", path: sign("5e0c1a2b-0000-4000-8000-0000000000a2"), auth: "maint cards",
			body: limitSign(banking.SandboxCertSecond), status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},

		{name: "clock", method: "POST", path: "/fintech/api/sandbox/clock", auth: "cards", body: `{"advance":"49h"}`, status: 200},
		{name: "clock not a duration", method: "POST", path: "/fintech/api/sandbox/clock", auth: "cards", body: `{"advance":"soon"}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "clock backwards", method: "POST", path: "/fintech/api/sandbox/clock", auth: "cards", body: `{"advance":"-1h"}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "clock without token", method: "POST", path: "/fintech/api/sandbox/clock", body: `{"advance":"1h"}`, status: 401, badRequest: true},
		{name: "clock without scope", method: "POST", path: "/fintech/api/sandbox/clock", auth: "pay", body: `{"advance":"1h"}`, status: 403},
		{name: "clock over the body limit", method: "POST", path: "/fintech/api/sandbox/clock", auth: "cards", body: overLimit(`{"advance":"1h"}`), status: 413, cause: "VALIDATION_FAULT"},
		{name: "clock over the rate limit", server: "limited", method: "POST", path: "/fintech/api/sandbox/clock", auth: "limited cards", body: `{"advance":"1h"}`, status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "clock in maintenance", server: "maint", method: "POST", path: "/fintech/api/sandbox/clock", auth: "maint cards", body: `{"advance":"1h"}`, status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
	}
}

// webhookCases covers the partner's webhook setting and delivery log
// (reference §12), gated like the payment operations.
func webhookCases() []bankCase {
	const hook, deliveries = "/fintech/api/v1/webhook", "/fintech/api/v1/webhook/deliveries"
	set := `{"url":"http://127.0.0.1:9/hook"}`
	return []bankCase{
		{name: "set generates the secret", method: "PUT", path: hook, auth: "pay", body: set, status: 200},
		{name: "set with a secret", method: "PUT", path: hook, auth: "invoice", body: `{"url":"http://127.0.0.1:9/hook2","secret":"a-partner-secret-of-32-characters"}`, status: 200},
		{name: "set not a URL", method: "PUT", path: hook, auth: "pay", body: `{"url":"hook"}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "set ftp URL", method: "PUT", path: hook, auth: "pay", body: `{"url":"ftp://127.0.0.1/hook"}`, status: 400, cause: "VALIDATION_FAULT"},
		{name: "set format jose", method: "PUT", path: hook, auth: "invoice", body: `{"url":"http://127.0.0.1:9/hook2","format":"jose"}`, status: 200},
		{name: "set format json", method: "PUT", path: hook, auth: "invoice", body: `{"url":"http://127.0.0.1:9/hook2","format":"json"}`, status: 200},
		{name: "set format xml", method: "PUT", path: hook, auth: "pay", body: `{"url":"http://127.0.0.1:9/hook","format":"xml"}`, status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "set secret too short", method: "PUT", path: hook, auth: "pay", body: `{"url":"http://127.0.0.1:9/hook","secret":"short"}`, status: 400, badRequest: true},
		{name: "set without token", method: "PUT", path: hook, body: set, status: 401, badRequest: true},
		{name: "set without scope", method: "PUT", path: hook, auth: "cards", body: set, status: 403},
		{name: "set over the rate limit", server: "limited", method: "PUT", path: hook, auth: "limited pay", body: set, status: 429, warm: true},
		{name: "set in maintenance", server: "maint", method: "PUT", path: hook, auth: "maint pay", body: set, status: 503},
		{name: "set over the body limit", method: "PUT", path: hook, auth: "pay", body: overLimit(set), status: 413, cause: "VALIDATION_FAULT"},
		{name: "get", method: "GET", path: hook, auth: "pay", status: 200},
		{name: "get none set", server: "limited", method: "GET", path: hook, auth: "limited invoice", status: 200},
		{name: "get without token", method: "GET", path: hook, status: 401, badRequest: true},
		{name: "get without scope", method: "GET", path: hook, auth: "cards", status: 403},
		{name: "get over the rate limit", server: "limited", method: "GET", path: hook, auth: "limited pay", status: 429, warm: true},
		{name: "get in maintenance", server: "maint", method: "GET", path: hook, auth: "maint pay", status: 503},
		{name: "deliveries", method: "GET", path: deliveries + "?limit=10", auth: "pay", status: 200},
		{name: "deliveries limit 0", method: "GET", path: deliveries + "?limit=0", auth: "pay", status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		{name: "deliveries without token", method: "GET", path: deliveries, status: 401, badRequest: true},
		{name: "deliveries without scope", method: "GET", path: deliveries, auth: "cards", status: 403},
		{name: "deliveries over the rate limit", server: "limited", method: "GET", path: deliveries, auth: "limited pay", status: 429, warm: true},
		{name: "deliveries in maintenance", server: "maint", method: "GET", path: deliveries, auth: "maint pay", status: 503},
		{name: "delete", method: "DELETE", path: hook, auth: "invoice", status: 204},
		{name: "delete none set", method: "DELETE", path: hook, auth: "invoice", status: 204},
		{name: "delete without token", method: "DELETE", path: hook, status: 401, badRequest: true},
		{name: "delete without scope", method: "DELETE", path: hook, auth: "cards", status: 403},
		{name: "delete over the rate limit", server: "limited", method: "DELETE", path: hook, auth: "limited pay", status: 429, warm: true},
		{name: "delete in maintenance", server: "maint", method: "DELETE", path: hook, auth: "maint pay", status: 503},
	}
}

// identityCases covers client-info, crypto, OAuth and the platform's
// routes (reference §3, §10).
func identityCases(t *testing.T, f *bankFixture) []bankCase {
	const sso = "/ic/sso/api"
	authorize := url.Values{"response_type": {"code"}, "client_id": {banking.SandboxClientID}, "redirect_uri": {banking.SandboxRedirectURI},
		"scope": {"openid GET_CLIENT_ACCOUNTS"}, "state": {"s1"}}
	unknownApp := url.Values{"response_type": {"code"}, "client_id": {"nope"}, "redirect_uri": {banking.SandboxRedirectURI}, "scope": {"openid"}}
	overScope := url.Values{"response_type": {"code"}, "client_id": f.changeApp["client_id"], "redirect_uri": {"https://partner.example/cb"},
		"scope": {"openid " + banking.ScopePayDocRU}, "state": {"s1"}}
	// Codes are single-use and refresh tokens rotate, so each row that
	// spends one has its own.
	codeForm := f.tokenForm(url.Values{"grant_type": {"authorization_code"}, "code": {f.code(t)}, "redirect_uri": {banking.SandboxRedirectURI}})
	refreshForm := f.tokenForm(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {f.refreshToken(t)}})
	legacyForm := f.tokenForm(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {f.refreshToken(t)}})
	badCode := f.tokenForm(url.Values{"grant_type": {"authorization_code"}, "code": {"not-a-code"}, "redirect_uri": {banking.SandboxRedirectURI}})
	wrongSecret := f.tokenForm(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_secret": {"not-the-secret"}})
	revoke := f.tokenForm(url.Values{"token": {f.refreshToken(t)}, "token_type_hint": {"refresh_token"}})
	v1Form := f.tokenForm(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {f.refreshToken(t)}})
	basicRefresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {f.refreshToken(t)}}.Encode()
	basicRevoke := url.Values{"token": {f.refreshToken(t)}}.Encode()
	basicChange := url.Values{"access_token": f.changeApp["access_token"], "new_client_secret": f.changeApp["new_client_secret"]}.Encode()
	// The authorize rows run on each path that serves the endpoint: the
	// older /ic/sso one and the /ic/sbbid ones of clients configured with
	// an OAuth version (reference §3).
	var authorizeRows []bankCase
	for _, p := range []string{sso + "/v2/oauth/authorize", "/ic/sbbid/api/v1/oauth/authorize", "/ic/sbbid/api/v2/oauth/authorize"} {
		authorizeRows = append(authorizeRows, []bankCase{
			{name: p + " authorize page", method: "GET", path: p + "?" + authorize.Encode(), accept: "text/html", status: 200},
			{name: p + " authorize page unknown app", method: "GET", path: p + "?" + unknownApp.Encode(), status: 400},
			{name: p + " authorize page scope the app is not registered for", method: "GET", path: p + "?" + overScope.Encode(), status: 302},
			{name: p + " authorize page without response_type", method: "GET", path: p + "?client_id=" + banking.SandboxClientID, status: 400, badRequest: true},
			{name: p + " authorize", method: "POST", path: p, body: authorizeForm(nil), status: 302},
			{name: p + " authorize denied", method: "POST", path: p, body: authorizeForm(url.Values{"consent": {"deny"}}), status: 302},
			{name: p + " authorize unknown app", method: "POST", path: p, body: unknownApp.Encode(), status: 400},
			{name: p + " authorize unregistered redirect_uri", method: "POST", path: p, body: authorizeForm(url.Values{"redirect_uri": {"http://evil.example/cb"}}), status: 400},
			// OAuth answers its own errors, but an oversized body is refused
			// before the endpoint runs, in the banking envelope.
			{name: p + " authorize over the body limit", method: "POST", path: p, body: overLimit(authorizeForm(nil)), status: 413, cause: "VALIDATION_FAULT"},
		}...)
	}
	return append(authorizeRows, []bankCase{
		{name: "client-info", method: "GET", path: "/fintech/api/v1/client-info", auth: "accounts", status: 200},
		{name: "client-info without token", method: "GET", path: "/fintech/api/v1/client-info", status: 401, badRequest: true},
		{name: "client-info bad token", method: "GET", path: "/fintech/api/v1/client-info", auth: "bad", status: 401, cause: "UNAUTHORIZED"},
		{name: "client-info without scope", method: "GET", path: "/fintech/api/v1/client-info", auth: "crypto", status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "crypto", method: "GET", path: "/fintech/api/v1/crypto", auth: "crypto", status: 200},
		{name: "crypto without token", method: "GET", path: "/fintech/api/v1/crypto", status: 401, badRequest: true},
		{name: "crypto without scope", method: "GET", path: "/fintech/api/v1/crypto", auth: "eio", status: 403},
		{name: "crypto eio", method: "GET", path: "/fintech/api/v1/crypto/eio", auth: "eio", status: 200},
		{name: "crypto eio without token", method: "GET", path: "/fintech/api/v1/crypto/eio", status: 401, badRequest: true},
		{name: "crypto eio without scope", method: "GET", path: "/fintech/api/v1/crypto/eio", auth: "crypto", status: 403},
		// Business operations, gated like the payment operations; the
		// OAuth endpoints below are the identity server's and are not.
		{name: "client-info over the rate limit", server: "limited", method: "GET", path: "/fintech/api/v1/client-info", auth: "limited accounts", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "client-info in maintenance", server: "maint", method: "GET", path: "/fintech/api/v1/client-info", auth: "maint accounts", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
		{name: "crypto over the rate limit", server: "limited", method: "GET", path: "/fintech/api/v1/crypto", auth: "limited crypto", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "crypto in maintenance", server: "maint", method: "GET", path: "/fintech/api/v1/crypto", auth: "maint crypto", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
		{name: "crypto eio over the rate limit", server: "limited", method: "GET", path: "/fintech/api/v1/crypto/eio", auth: "limited eio", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
		{name: "crypto eio in maintenance", server: "maint", method: "GET", path: "/fintech/api/v1/crypto/eio", auth: "maint eio", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
		{name: "user-info in maintenance", server: "maint", method: "GET", path: sso + "/v1/oauth/user-info", auth: "maint openid", status: 200},

		{name: "token by code", method: "POST", path: sso + "/v2/oauth/token", body: codeForm, status: 200},
		{name: "token by refresh token", method: "POST", path: sso + "/v2/oauth/token", body: refreshForm, status: 200},
		{name: "token unversioned path", method: "POST", path: sso + "/oauth/token", body: legacyForm, status: 200},
		{name: "token bad code", method: "POST", path: sso + "/v2/oauth/token", body: badCode, status: 400},
		{name: "token unversioned bad code", method: "POST", path: sso + "/oauth/token", body: badCode, status: 400},
		{name: "token wrong secret", method: "POST", path: sso + "/v2/oauth/token", body: wrongSecret, status: 401},
		{name: "token unversioned wrong secret", method: "POST", path: sso + "/oauth/token", body: wrongSecret, status: 401},
		{name: "token password grant", method: "POST", path: sso + "/v2/oauth/token", body: f.tokenForm(url.Values{"grant_type": {"password"}}), status: 400, badRequest: true},
		{name: "token over the body limit", method: "POST", path: sso + "/v2/oauth/token", body: overLimit(badCode), status: 413, cause: "VALIDATION_FAULT"},
		{name: "token unversioned over the body limit", method: "POST", path: sso + "/oauth/token", body: overLimit(badCode), status: 413, cause: "VALIDATION_FAULT"},
		{name: "token v1 path", method: "POST", path: sso + "/v1/oauth/token", body: v1Form, status: 200},
		{name: "token v1 bad code", method: "POST", path: sso + "/v1/oauth/token", body: badCode, status: 400},
		{name: "token v1 wrong secret", method: "POST", path: sso + "/v1/oauth/token", body: wrongSecret, status: 401},
		{name: "token v1 over the body limit", method: "POST", path: sso + "/v1/oauth/token", body: overLimit(badCode), status: 413, cause: "VALIDATION_FAULT"},
		// client_secret_basic: the form carries no client credentials, and
		// the contract must take it as the server does.
		{name: "token by refresh token with Basic", method: "POST", path: sso + "/v2/oauth/token", auth: "client basic", body: basicRefresh, status: 200},
		{name: "revoke with Basic", method: "POST", path: sso + "/v2/oauth/revoke", auth: "client basic", body: basicRevoke, status: 200},
		{name: "revoke", method: "POST", path: sso + "/v1/oauth/revoke", body: revoke, status: 200},
		{name: "revoke unknown token", method: "POST", path: sso + "/v2/oauth/revoke", body: f.tokenForm(url.Values{"token": {"unknown"}}), status: 200},
		{name: "revoke wrong secret", method: "POST", path: sso + "/v1/oauth/revoke", body: f.tokenForm(url.Values{"token": {"x"}, "client_secret": {"not-the-secret"}}), status: 401},
		{name: "revoke v2 wrong secret", method: "POST", path: sso + "/v2/oauth/revoke", body: f.tokenForm(url.Values{"token": {"x"}, "client_secret": {"not-the-secret"}}), status: 401},
		{name: "revoke without token", method: "POST", path: sso + "/v1/oauth/revoke", body: f.tokenForm(url.Values{}), status: 400, badRequest: true},
		{name: "revoke v2 without token", method: "POST", path: sso + "/v2/oauth/revoke", body: f.tokenForm(url.Values{}), status: 400, badRequest: true},
		{name: "revoke over the body limit", method: "POST", path: sso + "/v1/oauth/revoke", body: overLimit(f.tokenForm(url.Values{"token": {"x"}})), status: 413, cause: "VALIDATION_FAULT"},
		{name: "revoke v2 over the body limit", method: "POST", path: sso + "/v2/oauth/revoke", body: overLimit(f.tokenForm(url.Values{"token": {"x"}})), status: 413, cause: "VALIDATION_FAULT"},
		{name: "user-info JSON", method: "GET", path: sso + "/v1/oauth/user-info", auth: "openid", status: 200},
		{name: "user-info JWT", method: "GET", path: sso + "/v2/oauth/user-info", auth: "openid", accept: "application/jwt", status: 200},
		{name: "user-info without token", method: "GET", path: sso + "/v1/oauth/user-info", status: 401, badRequest: true},
		{name: "user-info bad token", method: "GET", path: sso + "/v2/oauth/user-info", auth: "bad", status: 401},
		{name: "user-info without openid", method: "GET", path: sso + "/v1/oauth/user-info", auth: "pay", status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
		{name: "user-info v2 without openid", method: "GET", path: sso + "/v2/oauth/user-info", auth: "pay", status: 403},
		{name: "change client secret wrong secret", method: "POST", path: sso + "/v1/change-client-secret", body: f.changeForm(url.Values{"client_secret": {"not-the-secret"}}), status: 401},
		{name: "change client secret another app's token", method: "POST", path: sso + "/v1/change-client-secret",
			body: f.changeForm(url.Values{"access_token": {strings.TrimPrefix(f.auth["openid"], "Bearer ")}}), status: 400},
		{name: "change client secret with Basic, wrong secret", method: "POST", path: sso + "/v1/change-client-secret", auth: "change app basic wrong secret",
			body: basicChange, status: 401},
		{name: "change client secret too short", method: "POST", path: sso + "/v1/change-client-secret", body: f.changeForm(url.Values{"new_client_secret": {"short"}}), status: 400, badRequest: true},
		{name: "change client secret over the body limit", method: "POST", path: sso + "/v1/change-client-secret", body: overLimit(f.changeForm(nil)), status: 413, cause: "VALIDATION_FAULT"},
		// Last: it changes the secret the rows above send.
		{name: "change client secret", method: "POST", path: sso + "/v1/change-client-secret", body: f.changeForm(nil), status: 200},

		{name: "health", method: "GET", path: "/healthz", status: 200},
		{name: "metrics", method: "GET", path: "/metrics", accept: "text/plain", status: 200},
		{name: "contract", method: "GET", path: "/openapi.yaml", accept: "application/yaml", status: 200},
	}...)
}

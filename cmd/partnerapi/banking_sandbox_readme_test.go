package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// readmeItem is the text of the README's "Pointing a real client at it"
// item that starts with start, up to the next item.
func readmeItem(t *testing.T, start, next string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i := strings.Index(readme, start)
	if i < 0 {
		t.Fatalf("README: no item %q", start)
	}
	j := strings.Index(readme[i:], next)
	if j < 0 {
		t.Fatalf("README: no item %q after %q", next, start)
	}
	return readme[i : i+j]
}

// TestReadmeBankingSandboxSteps follows the README's banking steps as a new
// partner would: the sandbox's seeded organisation, user and app it names
// are the ones a new data directory holds, the token of the scopes it gives
// creates its sample payment order as a draft, the draft is read and signed
// later with the body and the certificate uuids it gives, the sole authority's
// signature executes a new order at once, its QR confirmation and webhook
// routes answer, and a limit on an active card of the sandbox is applied for.
// A README that drifts from the seed or the routes fails here.
func TestReadmeBankingSandboxSteps(t *testing.T) {
	steps := readmeItem(t, "- **Banking**", "- **Assistant**")
	for what, value := range map[string]string{
		"INN": banking.SandboxOrgINN, "KPP": banking.SandboxOrgKPP,
		"account": banking.SandboxAccount, "second account": banking.SandboxAccount2,
		"BIC": banking.SandboxBIC, "correspondent account": banking.SandboxCorrAccount,
		"user": banking.SandboxUserLogin, "password": banking.SandboxUserPassword,
		"app": banking.SandboxClientID, "redirect URI": banking.SandboxRedirectURI,
		"sole authority's certificate": banking.SandboxCertSole,
		"first signer's certificate":   banking.SandboxCertFirst,
		"second signer's certificate":  banking.SandboxCertSecond,
	} {
		if !strings.Contains(steps, "`"+value+"`") {
			t.Errorf("README: the banking steps do not name the sandbox's %s `%s`", what, value)
		}
	}
	scope := regexp.MustCompile(`banking token --scope "([^"]+)"`).FindStringSubmatch(steps)
	if scope == nil {
		t.Fatal("README: the banking steps issue no token")
	}
	block := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(steps)
	if block == nil {
		t.Fatal("README: the banking steps give no payment order")
	}
	var sample map[string]any
	dec := json.NewDecoder(strings.NewReader(block[1]))
	dec.UseNumber()
	if err := dec.Decode(&sample); err != nil {
		t.Fatalf("README: the sample payment order is not JSON: %v", err)
	}

	ts := startServer(t, "--only", "banking")
	tok := "Bearer " + bankingToken(t, ts, scope[1])
	base := ts.urls["banking"] + "/fintech/api/v1"
	moscow, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	// The README asks for a fresh externalId and today's date in Moscow.
	order := func(signatures ...string) map[string]any {
		o := map[string]any{}
		for k, v := range sample {
			o[k] = v
		}
		o["externalId"] = banking.NewUUID()
		o["date"] = time.Now().In(moscow).Format(time.DateOnly)
		if len(signatures) > 0 {
			o["digestSignatures"] = signatureList(signatures...)
		}
		return o
	}
	status := func(what string, code int, body map[string]any, wantCode int, want string) {
		t.Helper()
		if code != wantCode || body["bankStatus"] != want {
			t.Fatalf("%s: %d %v, want %d %s", what, code, body, wantCode, want)
		}
	}

	draft := order()
	id := draft["externalId"].(string)
	code, body := bankRequestJSON(t, "POST", base+"/payments", tok, draft)
	status("the README's payment order", code, body, http.StatusCreated, "CREATED")
	code, body = bankRequestJSON(t, "GET", base+"/payments/"+id, tok, nil)
	status("GET of the draft", code, body, http.StatusOK, "CREATED")
	code, body = bankRequestJSON(t, "GET", base+"/payments/"+id+"/state", tok, nil)
	status("its /state", code, body, http.StatusOK, "CREATED")
	if code, digest := bankRequest(t, "GET", base+"/payments/"+id+"/digest", tok, nil); code != http.StatusOK ||
		!bytes.Contains(digest, []byte("externalId="+id)) {
		t.Fatalf("its /digest: %d %s", code, digest)
	}
	code, body = bankRequestJSON(t, "POST", base+"/payments/"+id+"/sign", tok,
		map[string]any{"digestSignatures": signatureList(banking.SandboxCertFirst)})
	status("signed by the first signer", code, body, http.StatusOK, "PARTSIGNED")
	code, body = bankRequestJSON(t, "POST", base+"/payments/"+id+"/sign", tok,
		map[string]any{"digestSignatures": signatureList(banking.SandboxCertSecond)})
	status("then by the second", code, body, http.StatusOK, "IMPLEMENTED")

	code, body = bankRequestJSON(t, "POST", base+"/payments", tok, order(banking.SandboxCertSole))
	status("the order signed by the sole authority", code, body, http.StatusCreated, "IMPLEMENTED")

	// Reference §7's id that the sandbox confirms.
	if code, body := bankRequestJSON(t, "POST", base+"/payments/qr-confirmation", tok,
		map[string]any{"externalDocIds": []string{"739b63f1-a5b2-4150-a152-e22eb39a3386"}}); code != http.StatusCreated || body["qrCode"] == nil {
		t.Fatalf("QR confirmation: %d %v", code, body)
	}
	if code, body := bankRequestJSON(t, "PUT", base+"/webhook", tok,
		map[string]any{"url": "https://partner.example/hook"}); code != http.StatusOK || body["secret"] == nil {
		t.Fatalf("webhook setting: %d %v", code, body)
	}

	code, raw := bankRequest(t, "GET", base+"/business-cards?statusCodes=ACTIVE", tok, nil)
	var cards struct {
		BusinessCards []struct {
			BusinessCardID string `json:"businessCardId"`
		} `json:"businessCards"`
	}
	if err := json.Unmarshal(raw, &cards); code != http.StatusOK || err != nil || len(cards.BusinessCards) == 0 {
		t.Fatalf("the sandbox's active business cards: %d %v %s", code, err, raw)
	}
	limit := func(signatures ...string) map[string]any {
		l := map[string]any{"code": "NON_RENEW", "businessCardId": cards.BusinessCards[0].BusinessCardID,
			"externalId": banking.NewUUID(), "limit": 5000}
		if len(signatures) > 0 {
			l["digestSignatures"] = signatureList(signatures...)
		}
		return l
	}
	unsigned := limit()
	code, body = bankRequestJSON(t, "POST", base+"/business-cards/limits", tok, unsigned)
	status("a limit application without signatures", code, body, http.StatusCreated, "CREATED")
	code, body = bankRequestJSON(t, "GET", base+"/business-cards/limits/"+unsigned["externalId"].(string)+"/state", tok, nil)
	status("its /state", code, body, http.StatusOK, "CREATED")
	code, body = bankRequestJSON(t, "POST", base+"/business-cards/limits", tok, limit(banking.SandboxCertSole))
	status("a limit application signed by the sole authority", code, body, http.StatusCreated, "EXPORTED")
}

// signatureList is a digestSignatures list of one sandbox signature per
// certificate uuid; the sandbox does not check the bytes.
func signatureList(uuids ...string) []map[string]string {
	var l []map[string]string
	for _, u := range uuids {
		l = append(l, map[string]string{"base64Encoded": "AAAA", "certificateUuid": u})
	}
	return l
}

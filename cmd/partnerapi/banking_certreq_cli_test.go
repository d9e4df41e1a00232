package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// In production the API does not activate a certificate request (the user
// brings the signed form to the bank); the bank's staff activate it with
// `banking cert-request activate`, after which the certificate is the
// user's, active, in GET /v1/crypto. A second activation, an unknown
// organisation and a request of another organisation are refused with
// what is wrong.
func TestCertRequestActivatedAtBankInProduction(t *testing.T) {
	w := newCertReqWorldIn(t, banking.ContourProduction)
	const id = "f0000000-0000-4000-8000-0000000000aa"
	_, body := ivanovCertRequest(t, id, "7")
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1, body); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/"+id+"/activate"), w.tokU1, nil); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("activate through the API in production: %d %v", code, m)
	}
	activate := func(org, externalID string) (map[string]any, error) {
		var out bytes.Buffer
		err := runBanking(context.Background(), []string{"cert-request", "activate", "--org", org, "--external-id", externalID,
			"--data-dir", w.ts.dataDir, "--banking-contour", banking.ContourProduction}, noEnv, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("cert-request activate printed %q: %v", out.String(), err)
		}
		return m, nil
	}
	st, err := activate(w.orgA, id)
	if err != nil || st["bankStatus"] != banking.CertRequestActivated {
		t.Fatalf("activation at the bank: %v %v", st, err)
	}
	match := certUUIDInComment.FindStringSubmatch(st["bankComment"].(string))
	if match == nil {
		t.Fatalf("the activated state names no certificate: %v", st)
	}
	infos, _ := w.certInfos(t, w.tokU1)
	if c, ok := infos[match[1]]; !ok || c["active"] != true {
		t.Fatalf("the issued certificate %s in GET /v1/crypto: %v", match[1], c)
	}
	if code, st := w.state(t, w.tokU1, id); code != 200 || st["bankStatus"] != banking.CertRequestActivated {
		t.Fatalf("state after the bank's activation: %d %v", code, st)
	}
	for _, tc := range []struct{ org, id, want string }{
		{w.orgA, id, "уже активирован"},
		{"no-such-org", id, "--org no-such-org: no such organisation"},
		{w.orgA, "f0000000-0000-4000-8000-0000000000ab", "не найден"},
		{w.orgA, "", "--org and --external-id are required"},
	} {
		if _, err := activate(tc.org, tc.id); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("activate --org %s --external-id %s: %v, want an error saying %q", tc.org, tc.id, err, tc.want)
		}
	}
}

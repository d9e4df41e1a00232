package bankapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
	"partnerapi/internal/web"
)

// TestReferenceIDIsFoundInTheLog checks that the referenceId of an error
// answer leads to the request in the log: it is the request id the
// platform made (on the access line as request_id), and for a request that
// brought its own X-Request-Id it is a fresh UUID logged beside that id.
// It holds for handler errors and for the platform's own (unknown route).
func TestReferenceIDIsFoundInTheLog(t *testing.T) {
	logs := &testenv.LogBuffer{}
	log := slog.New(web.NewTextHandler(logs, nil))
	mux := NewServer(Deps{Log: log, Auth: fakeAuth{"t": {OrgID: "o", Scopes: []string{banking.ScopeGetClientAccounts}}}})
	srv := httptest.NewServer(web.API{Name: "banking", Handler: mux, Errors: ErrorWriter()}.Build(log, nil))
	defer srv.Close()
	for _, tc := range []struct {
		name, path, clientID string
		status               int
	}{
		{"handler error, platform id", "/fintech/api/v1/client-info", "", 401},
		{"handler error, client id", "/fintech/api/v1/client-info", "client-chosen-id-1", 401},
		{"unknown route, platform id", "/fintech/api/v1/nowhere", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
			req.Header.Set("Authorization", "Bearer wrong")
			if tc.clientID != "" {
				req.Header.Set("X-Request-Id", tc.clientID)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb errorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || resp.StatusCode != tc.status {
				t.Fatalf("%d %+v %v", resp.StatusCode, eb, err)
			}
			if !gost.IsCanonicalUUID(eb.ReferenceID) {
				t.Fatalf("referenceId %q is not a UUID", eb.ReferenceID)
			}
			rid := resp.Header.Get("X-Request-Id")
			if tc.clientID == "" {
				if eb.ReferenceID != rid {
					t.Fatalf("referenceId %s, request id %s", eb.ReferenceID, rid)
				}
				if !strings.Contains(logs.String(), "request_id="+rid) {
					t.Fatalf("no access line with request_id=%s:\n%s", rid, logs.String())
				}
				return
			}
			if eb.ReferenceID == tc.clientID {
				t.Fatal("a client's request id became the referenceId")
			}
			if !strings.Contains(logs.String(), "referenceId="+eb.ReferenceID+" request_id="+tc.clientID) {
				t.Fatalf("no log line with referenceId=%s and the client's id:\n%s", eb.ReferenceID, logs.String())
			}
		})
	}
}

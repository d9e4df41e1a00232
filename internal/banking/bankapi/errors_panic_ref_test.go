package bankapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

// TestPlatformErrorReferenceIDInLog checks that the referenceId of every
// answer the platform writes itself (a recovered panic's 500, an unknown
// route's 404) is found in the log also when the client brought its own
// X-Request-Id: then the referenceId is a fresh UUID, not the access
// line's request_id, so it has to be logged beside that id, as handler
// errors are (TestReferenceIDIsFoundInTheLog). Before, the platform's
// answers were written with no logger, and a partner quoting the
// referenceId of a 500 UNKNOWN_EXCEPTION led to no line at all.
func TestPlatformErrorReferenceIDInLog(t *testing.T) {
	logs := &testenv.LogBuffer{}
	log := slog.New(web.NewTextHandler(logs, nil))
	srv := NewServer(Deps{Log: log, Auth: panicAuth{}})
	ts := httptest.NewServer(web.API{Name: "banking", Handler: srv, Errors: srv.ErrorWriter()}.Build(log, nil))
	defer ts.Close()
	for _, tc := range []struct {
		name, path, cause string
		status            int
	}{
		{"panic", "/fintech/api/v1/client-info", "UNKNOWN_EXCEPTION", http.StatusInternalServerError},
		{"unknown route", "/fintech/api/v1/nowhere", "NOT_FOUND", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientID := "client-chosen-" + strings.ReplaceAll(tc.name, " ", "-")
			req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
			req.Header.Set("Authorization", "Bearer any")
			req.Header.Set("X-Request-Id", clientID)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb errorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || resp.StatusCode != tc.status || eb.Cause != tc.cause {
				t.Fatalf("%d %+v %v", resp.StatusCode, eb, err)
			}
			if eb.ReferenceID == "" || eb.ReferenceID == clientID {
				t.Fatalf("referenceId %q", eb.ReferenceID)
			}
			if !strings.Contains(logs.String(), "referenceId="+eb.ReferenceID+" request_id="+clientID) {
				t.Fatalf("no log line with referenceId=%s and the client's id:\n%s", eb.ReferenceID, logs.String())
			}
		})
	}
}

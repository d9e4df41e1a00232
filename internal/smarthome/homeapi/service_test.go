package homeapi

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// newTestService is the smart home service over a migrated SQLite store,
// its catalog loaded: what most tests of this package serve. Tests that
// restrict the catalog or wrap the store before Init build their own.
func newTestService(tb testing.TB) *smarthome.Service {
	tb.Helper()
	ctx := context.Background()
	db := storetest.SQLite(tb)
	if err := homesql.Migrate(ctx, db); err != nil {
		tb.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		tb.Fatal(err)
	}
	return svc
}

// newTestServer serves svc as serve does, the platform's middleware and
// error envelope included, on a loopback server closed with the test.
func newTestServer(tb testing.TB, svc *smarthome.Service) *httptest.Server {
	tb.Helper()
	api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: svc, Log: slog.New(slog.DiscardHandler)}), Errors: ErrorWriter()}
	srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
	tb.Cleanup(srv.Close)
	return srv
}

// basicDo sends a request with Basic credentials login:pw and, when body is
// not empty, a JSON body; it returns the status and the body read whole.
func basicDo(tb testing.TB, base, method, path, login, pw, body string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(login+":"+pw)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// rootAndDev makes the administrator "root" and the agent "dev" and returns
// their passwords, the two callers most tests of the API need.
func rootAndDev(tb testing.TB, svc *smarthome.Service) (adminPW, agentPW string) {
	tb.Helper()
	ctx := context.Background()
	adminPW, err := svc.CreateCredential(ctx, smarthome.KindAdmin, "root")
	if err != nil {
		tb.Fatal(err)
	}
	agentPW, err = svc.CreateCredential(ctx, smarthome.KindAgent, "dev")
	if err != nil {
		tb.Fatal(err)
	}
	return adminPW, agentPW
}

package homeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// outageStore is the real store whose database goes down on demand: the
// change check (Stamp) and the credential lookup fail with the error of a
// real connect to a closed port, the lookup alone when only credsDown.
type outageStore struct {
	smarthome.Store
	down, credsDown atomic.Bool
	err             error
}

func (s *outageStore) Stamp(ctx context.Context) (smarthome.Stamp, error) {
	if s.down.Load() {
		return smarthome.Stamp{}, s.err
	}
	return s.Store.Stamp(ctx)
}

func (s *outageStore) CredentialHash(ctx context.Context, kind, login string) (string, error) {
	if s.down.Load() || s.credsDown.Load() {
		return "", s.err
	}
	return s.Store.CredentialHash(ctx, kind, login)
}

// While the database is unavailable the API answers the reference's 503
// (code 503, details []) with a Retry-After, not 500, and a login that
// cannot be checked is 503, not 401. Each is an ERROR line saying the
// database is unavailable, without the URL's password; once the database
// is back the same requests succeed.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	store := &outageStore{Store: homesql.New(db), err: storetest.UnavailableError(t)}
	// A recheck this short asks the store on every request, as one does
	// once the cached snapshot has aged past the real bound.
	svc := smarthome.NewServiceRecheck(store, time.Nanosecond)
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	// The error lines go to the logger the server is given (serve's, with
	// its --log-format), not to the process's default logger.
	var logs testenv.LogBuffer
	api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: svc, Log: slog.New(slog.NewTextHandler(&logs, nil))}), Errors: ErrorWriter()}
	srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
	t.Cleanup(srv.Close)

	get := func() (*http.Response, errorBody) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/mqtt-gate/categories", nil)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("agent-1:"+pw)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body errorBody
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}
	for _, c := range []struct {
		name string
		flag *atomic.Bool
	}{{"database down", &store.down}, {"login check", &store.credsDown}} {
		c.flag.Store(true)
		resp, body := get()
		c.flag.Store(false)
		if resp.StatusCode != http.StatusServiceUnavailable || body.Code != 503 || body.Details == nil {
			t.Errorf("%s: %d %+v, want 503 with code 503 and details []", c.name, resp.StatusCode, body)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", c.name)
		}
	}
	if n := strings.Count(logs.String(), "level=ERROR msg=\"smarthome: database unavailable\""); n != 2 || !strings.Contains(logs.String(), "request_id=") {
		t.Errorf("%d ERROR lines about the database with request ids, want 2:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs.String())
	}
	if resp, body := get(); resp.StatusCode != http.StatusOK {
		t.Errorf("after the database came back: %d %+v", resp.StatusCode, body)
	}
}

package chatgrpc_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	"partnerapi/internal/assistant/upstream"
)

// A model served by an upstream replica whose URL carries credentials (a
// user name and password, API keys in its query) fails over gRPC with the
// code and message its error maps to, and neither that message nor any
// line the server or the pool logs shows a credential: net/http names a
// failed request's URL with its user name, which the engine must not pass
// on. A replica that does not serve the model is NOT_FOUND "No such
// model", as an unknown model is.
func TestUpstreamFailuresOverGRPC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    string // the replica's chat: "hang" (no headers in time), "refused", "404"
		code    codes.Code
		message string
	}{
		{"no headers in time", "hang", codes.Internal, "Service Unavailable"},
		{"refused", "refused", codes.Internal, "Service Unavailable"},
		{"another model", "404", codes.NotFound, "No such model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/models"):
					fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
				case strings.HasSuffix(r.URL.Path, "/chat/completions") && tc.mode == "hang":
					select {
					case <-release:
					case <-r.Context().Done():
					}
				case strings.HasSuffix(r.URL.Path, "/chat/completions") && tc.mode == "404":
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"object":"error","message":"The model `+"`m`"+` does not exist.","type":"NotFoundError","code":404}`)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			defer close(release)
			var logs testenv.LogBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			client := upstream.NewClient()
			if tc.mode == "hang" {
				// Only where the timeout is what fails the replica: the
				// client also lists the models, and a list or a 404 slower
				// than this on a loaded machine would fail the other cases
				// for the wrong reason.
				client.Transport.(*http.Transport).ResponseHeaderTimeout = 200 * time.Millisecond
			}
			base := strings.Replace(srv.URL, "http://", "http://operator:s3cret@", 1) + "/?api_key=k3y&token=t0ken"
			pool := upstream.NewPool("m", upstream.Served{}, []string{base}, upstream.PoolOptions{Client: client, Log: log, ProbeInterval: time.Hour})
			t.Cleanup(pool.Close)
			e := startLogged(t, &assistant.MultiEngine{Routes: map[string]assistant.Engine{"m": pool}}, chatgrpc.Config{}, log)
			ctx := authed(e.token(t, assistant.ScopeCorp))
			if tc.mode == "refused" {
				srv.Close()
			}
			_, err := e.chat.Chat(ctx, chatReq("m"))
			st := status.Convert(err)
			if st.Code() != tc.code || st.Message() != tc.message {
				t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.message)
			}
			for _, s := range []string{"operator", "s3cret", "k3y", "t0ken"} {
				if strings.Contains(st.Message(), s) || strings.Contains(logs.String(), s) {
					t.Errorf("%q in the status %q or the log:\n%s", s, st.Message(), logs.String())
				}
			}
		})
	}
}

package chatgrpc_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"partnerapi/internal/testenv"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/storetest"
)

// outageStore is the real store whose token lookups fail, once down, with
// the error of a real connect to a closed port, as they do while
// PostgreSQL is stopped.
type outageStore struct {
	assistant.Store
	down atomic.Bool
	err  error
}

func (s *outageStore) Token(ctx context.Context, hash string) (assistant.Token, error) {
	if s.down.Load() {
		return assistant.Token{}, s.err
	}
	return s.Store.Token(ctx, hash)
}

// While the database is unavailable every call is REST's 503 "Service
// Unavailable" in gRPC's terms: the code the reference maps REST's 503 to
// (13 INTERNAL, as for a model that cannot be reached) with that message,
// not "Internal Server Error", and never UNAUTHENTICATED for a token that
// could not be checked. Each is an ERROR line saying the database is
// unavailable, without the URL's password; calls succeed once it is back.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	store := &outageStore{Store: assistantsql.New(db), err: storetest.UnavailableError(t)}
	svc := assistant.NewService(store, fakeEngine{}, assistant.Config{})
	var logs testenv.LogBuffer
	g, _ := chatgrpc.NewGRPCServer(chatgrpc.New(svc, slog.New(slog.NewTextHandler(&logs, nil)), chatgrpc.Config{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	chat, models := pb.NewChatServiceClient(conn), pb.NewModelsServiceClient(conn)
	e := &env{svc: svc}
	actx := authed(e.token(t, assistant.ScopeCorp))

	calls := map[string]func() error{
		"ListModels": func() error { _, err := models.ListModels(actx, &pb.ListModelsRequest{}); return err },
		"Chat":       func() error { _, err := chat.Chat(actx, chatReq("echo")); return err },
		"ChatStream": func() error {
			st, err := chat.ChatStream(actx, chatReq("echo"))
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					return err
				}
			}
		},
	}
	store.down.Store(true)
	for name, call := range calls {
		st := status.Convert(call())
		if st.Code() != codes.Internal || st.Message() != "Service Unavailable" {
			t.Errorf("%s: %v %q, want Internal \"Service Unavailable\"", name, st.Code(), st.Message())
		}
	}
	if n := strings.Count(logs.String(), "level=ERROR msg=\"assistant grpc: database unavailable\""); n != len(calls) {
		t.Errorf("%d ERROR lines about the database, want %d:\n%s", n, len(calls), logs.String())
	}
	if strings.Contains(logs.String(), storetest.DeadPassword) {
		t.Errorf("the log shows the database password:\n%s", logs.String())
	}
	store.down.Store(false)
	for name, call := range calls {
		if err := call(); err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("%s after the database came back: %v", name, err)
		}
	}
}

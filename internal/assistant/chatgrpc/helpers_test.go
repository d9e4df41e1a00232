package chatgrpc_test

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/storetest"
)

// env is one running gRPC server over a real service and store.
type env struct {
	svc    *assistant.Service
	conn   *grpc.ClientConn
	chat   pb.ChatServiceClient
	models pb.ModelsServiceClient
	clock  *atomic.Int64 // seconds added to the service's clock
}

func start(t *testing.T, engine assistant.Engine, cfg chatgrpc.Config) *env {
	t.Helper()
	return startLogged(t, engine, cfg, nil)
}

// startLogged is start with the server writing its log to log.
func startLogged(t *testing.T, engine assistant.Engine, cfg chatgrpc.Config, log *slog.Logger) *env {
	t.Helper()
	clock := &atomic.Int64{}
	e := startService(t, engine, assistant.Config{
		Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load()) * time.Second) },
	}, cfg, log)
	e.clock = clock
	return e
}

// startService runs the gRPC server over a service of svcCfg on a fresh
// SQLite store.
func startService(t *testing.T, engine assistant.Engine, svcCfg assistant.Config, cfg chatgrpc.Config, log *slog.Logger) *env {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	e := &env{svc: assistant.NewService(assistantsql.New(db), engine, svcCfg)}
	g, _ := chatgrpc.NewGRPCServer(chatgrpc.New(e.svc, log, cfg))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	e.conn, err = grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.conn.Close() })
	e.chat, e.models = pb.NewChatServiceClient(e.conn), pb.NewModelsServiceClient(e.conn)
	return e
}

// token provisions a client and returns a bearer token for it.
func (e *env) token(t *testing.T, scope assistant.Scope, balances ...assistant.Balance) string {
	t.Helper()
	ctx := context.Background()
	cr, err := e.svc.CreateClient(ctx, scope, balances)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := e.svc.IssueToken(ctx, "Basic "+cr.AuthorizationKey, "6f0b1291-c7f3-43c6-bb2e-9f3efb2dc98e", string(scope), "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func authed(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

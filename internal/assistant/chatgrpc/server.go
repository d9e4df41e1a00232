// Package chatgrpc is the gRPC transport of the assistant API, wire-compatible
// with the provider's gigachat.v1 proto (reference assistant-grpc.md). It
// calls the same assistant.Service as the REST transport, so validation,
// balances and the per-client concurrency budget are shared.
package chatgrpc

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/web"
)

// Config holds the transport's settings.
type Config struct {
	// AuthCode answers a missing, invalid or expired token. The spec names
	// PERMISSION_DENIED (7, the default); gRPC convention and some clients
	// that re-authenticate only on it want UNAUTHENTICATED (16).
	AuthCode codes.Code
}

// Server implements the ChatService and ModelsService.
type Server struct {
	pb.UnimplementedChatServiceServer
	pb.UnimplementedModelsServiceServer

	svc *assistant.Service
	log *slog.Logger
	cfg Config
}

// New builds the transport over the domain service.
func New(svc *assistant.Service, log *slog.Logger, cfg Config) *Server {
	if cfg.AuthCode == codes.OK {
		cfg.AuthCode = codes.PermissionDenied
	}
	return &Server{svc: svc, log: log, cfg: cfg}
}

// NewGRPCServer returns a grpc.Server with the assistant services, health
// and reflection registered, and the auth and request-id interceptors.
func NewGRPCServer(s *Server, opts ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	opts = append(opts,
		grpc.ChainUnaryInterceptor(s.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.streamInterceptor))
	g := grpc.NewServer(opts...)
	pb.RegisterChatServiceServer(g, s)
	pb.RegisterModelsServiceServer(g, s)
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(pb.ChatService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(pb.ModelsService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, h)
	reflection.Register(g)
	return g, h
}

type ctxKey int

const (
	principalKey ctxKey = iota
	requestIDKey
)

func principal(ctx context.Context) assistant.Principal {
	p, _ := ctx.Value(principalKey).(assistant.Principal)
	return p
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// ids echoes the client's x-request-id / x-session-id or makes new ones, as
// the REST transport does with its headers.
func ids(md metadata.MD) metadata.MD {
	out := metadata.MD{}
	for _, k := range []string{"x-request-id", "x-session-id"} {
		v := first(md, k)
		if v == "" || len(v) > 128 {
			v = web.NewUUID()
		}
		out.Set(k, v)
	}
	return out
}

func first(md metadata.MD, k string) string {
	if v := md.Get(k); len(v) > 0 {
		return v[0]
	}
	return ""
}

// ours reports whether a method belongs to the assistant services; health
// and reflection are open like REST's /healthz.
func ours(method string) bool { return strings.HasPrefix(method, "/gigachat.v1.") }

// prepare attaches request ids and, for assistant methods, the principal.
func (s *Server) prepare(ctx context.Context, method string, setHeader func(metadata.MD) error) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	out := ids(md)
	// Header metadata goes out even when the call fails, so a refused call
	// can still be traced by its id.
	_ = setHeader(out)
	ctx = context.WithValue(ctx, requestIDKey, out.Get("x-request-id")[0])
	if !ours(method) {
		return ctx, nil
	}
	tok, _ := strings.CutPrefix(first(md, "authorization"), "Bearer ")
	p, err := s.svc.Authenticate(ctx, strings.TrimSpace(tok))
	if err != nil {
		return ctx, s.statusError(ctx, err)
	}
	return context.WithValue(ctx, principalKey, p), nil
}

// access logs one finished call like the HTTP access log: method, code,
// duration and request id; never the token.
func (s *Server) access(ctx context.Context, method string, start time.Time, err error) {
	if s.log == nil {
		return
	}
	s.log.InfoContext(ctx, "grpc", "service", "assistant-grpc", "method", method, "code", status.Code(err).String(),
		"duration_ms", time.Since(start).Milliseconds(), "request_id", requestID(ctx))
}

func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	ctx, err = s.prepare(ctx, info.FullMethod, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) })
	defer func() { s.access(ctx, info.FullMethod, start, err) }()
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	start := time.Now()
	ctx, err := s.prepare(ss.Context(), info.FullMethod, ss.SetHeader)
	defer func() { s.access(ctx, info.FullMethod, start, err) }()
	if err != nil {
		return err
	}
	return h(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
}

func (s *Server) model(m assistant.ModelInfo) *pb.Model {
	return &pb.Model{Name: s.svc.ModelID(m), Object: "model", OwnedBy: m.OwnedBy, Type: m.Type}
}

// ListModels is GET /models.
func (s *Server) ListModels(ctx context.Context, _ *pb.ListModelsRequest) (*pb.ListModelsResponse, error) {
	ms, err := s.svc.Models(ctx)
	if err != nil {
		return nil, s.statusError(ctx, err)
	}
	out := &pb.ListModelsResponse{Models: make([]*pb.Model, 0, len(ms))}
	for _, m := range ms {
		out.Models = append(out.Models, s.model(m))
	}
	return out, nil
}

// RetrieveModel is GET /models/{model}.
func (s *Server) RetrieveModel(ctx context.Context, req *pb.RetrieveModelRequest) (*pb.RetrieveModelResponse, error) {
	m, err := s.svc.ResolveModel(ctx, req.GetName())
	if err != nil {
		return nil, s.statusError(ctx, err)
	}
	return &pb.RetrieveModelResponse{Model: s.model(m)}, nil
}

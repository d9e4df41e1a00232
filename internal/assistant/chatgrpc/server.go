// Package chatgrpc is the gRPC transport of the assistant API, wire-compatible
// with the provider's gigachat.v1 proto (reference assistant-grpc.md). It
// calls the same assistant.Service as the REST transport, so validation,
// balances and the per-client concurrency budget are shared.
package chatgrpc

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

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
	// MaxRequestBytes caps one request message; zero is
	// DefaultMaxRequestBytes. The wiring passes the REST listener's body
	// cap (--assistant-max-body-mb), so both transports refuse the same
	// sizes.
	MaxRequestBytes int
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
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return &Server{svc: svc, log: log, cfg: cfg}
}

// DefaultMaxRequestBytes caps one request message at what the REST listener
// reads of a chat body by default (web.API's default body cap). A larger request is answered
// INVALID_ARGUMENT "Payload too large", the code the reference gives REST's
// 413 (assistant-grpc.md §5).
const DefaultMaxRequestBytes = 1 << 20

// receiveLimit is grpc-go's own receive limit. grpc-go refuses a message
// over its limit with RESOURCE_EXHAUSTED, and the reference keeps that code
// for 402 and 429; so the limit sits far above the request cap and the
// interceptors refuse what lies between with REST's code. It is the largest
// body the REST listener reads at all (a file upload with its form), so
// this listener holds no more of one request in memory than that one does.
//
// A message over even this limit (over the cap plus a MiB, for a cap the
// operator raised above it) still gets grpc-go's RESOURCE_EXHAUSTED
// "grpc: received message larger than max", and nothing of ours can change
// that: grpc-go judges the message by its length prefix while receiving it,
// and its server stream's RecvMsg writes that status to the client itself
// before it returns the error, for unary methods (which grpc-go 1.85 serves
// through the same stream path, decoding the request before the unary
// interceptor runs) and streams alike, so a status an interceptor or a
// handler returns afterwards is dropped. The only way to answer every size
// with REST's code would be a limit no request reaches, which would let
// grpc-go read any message whole into memory before we could refuse it.
const receiveLimit = assistant.DefaultMaxFileBytes + 1<<20

// checkSize refuses a received request over the configured cap.
func (s *Server) checkSize(m any) error {
	if pm, ok := m.(proto.Message); ok && proto.Size(pm) > s.cfg.MaxRequestBytes {
		return status.Error(codes.InvalidArgument, "Payload too large")
	}
	return nil
}

// NewGRPCServer returns a grpc.Server with the assistant services, health
// and reflection registered, the auth, request-id and size interceptors, and
// the receive limit above. The caller's options come after ours, so a
// caller may still set its own receive limit.
func NewGRPCServer(s *Server, opts ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	// A cap raised above the file-sized limit moves the limit with it, a
	// MiB above, so a request just over the cap still gets REST's code.
	limit := max(receiveLimit, s.cfg.MaxRequestBytes+1<<20)
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(limit)}, opts...)
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
	p, err := s.svc.Authenticate(ctx, assistant.BearerToken(first(md, "authorization")))
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
	defer s.recoverPanic(ctx, info.FullMethod, &err)
	if err == nil {
		err = s.checkSize(req)
	}
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// recoverPanic turns a panic in a handler into INTERNAL with its stack in
// the log, as the HTTP listeners' recovery does: grpc-go recovers nothing,
// so without it one panicking call would end the process and with it all
// three APIs. It must be deferred directly, so that recover sees the panic.
func (s *Server) recoverPanic(ctx context.Context, method string, err *error) {
	p := recover()
	if p == nil {
		return
	}
	if s.log != nil {
		s.log.ErrorContext(ctx, "assistant grpc: panic serving call", "method", method, "request_id", requestID(ctx),
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	*err = status.Error(codes.Internal, "Internal Server Error")
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
	s   *Server
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

// RecvMsg refuses an oversized request as the unary interceptor does; the
// handler returns the refusal, so it becomes the call's status.
func (w *wrappedStream) RecvMsg(m any) error {
	if err := w.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return w.s.checkSize(m)
}

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	start := time.Now()
	ctx, err := s.prepare(ss.Context(), info.FullMethod, ss.SetHeader)
	defer func() { s.access(ctx, info.FullMethod, start, err) }()
	defer s.recoverPanic(ctx, info.FullMethod, &err)
	if err != nil {
		return err
	}
	return h(srv, &wrappedStream{ServerStream: ss, ctx: ctx, s: s})
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

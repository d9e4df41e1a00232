package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	"partnerapi/internal/web"
)

// assistantGRPCConfig is the assistant's gRPC listener (reference
// assistant-grpc.md §1): beside the REST listener, sharing its service.
type assistantGRPCConfig struct {
	addr     string
	authCode int
	// maxRequestBytes is the REST listener's body cap
	// (--assistant-max-body-mb), so both transports refuse the same sizes;
	// zero is chatgrpc's default.
	maxRequestBytes int
	// maxConns and connMetrics are serve's --max-connections and its
	// series, which count the gRPC port's connections too.
	maxConns    int
	connMetrics *web.ConnMetrics
}

// grpcMaxIdle is how long a gRPC connection with no call is kept under
// --max-connections.
const grpcMaxIdle = 5 * time.Minute

func (c *assistantGRPCConfig) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "assistant-grpc-addr", "127.0.0.1:9446", `assistant gRPC listen address ("off" disables it)`)
	fs.IntVar(&c.authCode, "assistant-grpc-auth-code", int(codes.PermissionDenied),
		"gRPC code for a missing, invalid or expired token: 7 (PERMISSION_DENIED, the spec) or 16 (UNAUTHENTICATED)")
}

// assistantGRPCSidecar binds the gRPC listener now, so a taken port fails
// start-up like the HTTP listeners do, and returns the sidecar that serves
// it. TLS uses the same --tls-cert/--tls-key as HTTP; without them the
// listener speaks plaintext HTTP/2. ok is false when the listener is off.
func assistantGRPCSidecar(c assistantGRPCConfig, svc *assistant.Service, tlsFiles web.TLSFiles, log *slog.Logger) (sc sidecar, addr net.Addr, ok bool, err error) {
	if c.addr == "" || c.addr == "off" {
		return sidecar{}, nil, false, nil
	}
	code := codes.Code(c.authCode)
	if code != codes.PermissionDenied && code != codes.Unauthenticated {
		return sidecar{}, nil, false, fmt.Errorf("--assistant-grpc-auth-code must be 7 or 16, not %d", c.authCode)
	}
	var opts []grpc.ServerOption
	if tlsFiles.Enabled() {
		cfg, err := tlsFiles.Config(log)
		if err != nil {
			return sidecar{}, nil, false, fmt.Errorf("assistant-grpc: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return sidecar{}, nil, false, fmt.Errorf("assistant-grpc: listen on %s: %w", c.addr, err)
	}
	if c.maxConns > 0 {
		// HTTP/2 gives the server no idle state between calls to close
		// at the cap, so at the cap new connections wait; a connection
		// with no call for five minutes is sent GOAWAY (its client dials
		// again when it next calls), so idle ones do not hold the slots.
		ln = web.LimitListener(ln, "assistant-grpc", c.maxConns, c.connMetrics)
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: grpcMaxIdle}))
	}
	g, health := chatgrpc.NewGRPCServer(chatgrpc.New(svc, log, chatgrpc.Config{AuthCode: code, MaxRequestBytes: c.maxRequestBytes}), opts...)
	log.Info("listening", "service", "assistant-grpc", "addr", ln.Addr().String(), "tls", tlsFiles.Enabled())
	return sidecar{
		name:     "assistant-grpc",
		listener: true,
		addr:     ln.Addr().String(),
		serve: func() error {
			if err := g.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				return err
			}
			return nil
		},
		stop: func(ctx context.Context) error {
			// Health goes NOT_SERVING first so balancers stop sending; then
			// running streams get the grace period to finish. The port is
			// released even when Serve never ran (a failed start-up).
			defer ln.Close()
			health.Shutdown()
			done := make(chan struct{})
			go func() { g.GracefulStop(); close(done) }()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				g.Stop()
				return ctx.Err()
			}
		},
	}, ln.Addr(), true, nil
}

// assistantGRPCSidecars is what the assistant module appends to its built
// sidecars: the gRPC listener over the same service, or nothing when off.
// c is the module's own copy of the flags (registered by its
// registerFlags), so serves running side by side in one process (tests)
// do not share them.
func assistantGRPCSidecars(c assistantGRPCConfig, svc *assistant.Service, d deps, maxBody int64) ([]sidecar, error) {
	c.maxRequestBytes = int(maxBody)
	c.maxConns, c.connMetrics = d.maxConnections, d.connMetrics
	sc, _, ok, err := assistantGRPCSidecar(c, svc, d.tls, d.log)
	if err != nil || !ok {
		return nil, err
	}
	return []sidecar{sc}, nil
}

package chatgrpc_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// sized is a chat request whose encoding is exactly n bytes.
func sized(t *testing.T, n int) *pb.ChatRequest {
	t.Helper()
	req := chatReq("echo")
	// The content's length prefix has the same width for every length near
	// n, so one correction after a first guess lands on n exactly.
	guess := n - 64
	req.Messages[0].Content = strings.Repeat("x", guess)
	req.Messages[0].Content = strings.Repeat("x", guess+n-proto.Size(req))
	if got := proto.Size(req); got != n {
		t.Fatalf("request of %d bytes, want %d", got, n)
	}
	return req
}

// TestRequestSize: a request over REST's body cap is INVALID_ARGUMENT
// "Payload too large", REST's 413 in the reference's mapping, in unary and
// streaming calls alike, and so is one over grpc-go's default receive limit
// of 4 MiB, which would otherwise answer RESOURCE_EXHAUSTED, the code the
// reference keeps for 402 and 429. A cap the operator raised
// (--assistant-max-body-mb) moves the line for both transports.
func TestRequestSize(t *testing.T) {
	for _, c := range []struct {
		name string
		cap  int
	}{{"default cap", 0}, {"raised cap", 3 << 20}} {
		t.Run(c.name, func(t *testing.T) { testRequestSize(t, c.cap) })
	}
}

func testRequestSize(t *testing.T, limit int) {
	e := start(t, fakeEngine{}, chatgrpc.Config{MaxRequestBytes: limit})
	ctx := authed(e.token(t, assistant.ScopeCorp))
	if limit == 0 {
		limit = chatgrpc.DefaultMaxRequestBytes
	}
	calls := []struct {
		name string
		call func(context.Context, *pb.ChatRequest) error
	}{
		{"Chat", func(ctx context.Context, req *pb.ChatRequest) error { _, err := e.chat.Chat(ctx, req); return err }},
		{"ChatStream", func(ctx context.Context, req *pb.ChatRequest) error {
			st, err := e.chat.ChatStream(ctx, req)
			if err != nil {
				return err
			}
			for err == nil {
				_, err = st.Recv()
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}},
	}
	sizes := []struct {
		name string
		size int
		code codes.Code
	}{
		{"at the cap", limit, codes.OK},
		{"one byte over", limit + 1, codes.InvalidArgument},
		{"over grpc-go's default limit", 5 << 20, codes.InvalidArgument},
	}
	for _, c := range calls {
		for _, s := range sizes {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				st := status.Convert(c.call(ctx, sized(t, s.size)))
				if st.Code() != s.code || (s.code == codes.InvalidArgument && st.Message() != "Payload too large") {
					t.Fatalf("got %v %q, want %v", st.Code(), st.Message(), s.code)
				}
			})
		}
	}
}

// TestRequestSizeOverReceiveLimit pins what the README's
// --assistant-max-body-mb row documents: a request over grpc-go's receive
// limit (41 MiB, the largest body REST reads at all, or the cap plus a MiB
// for a cap raised above it) gets grpc-go's own RESOURCE_EXHAUSTED, which
// grpc-go writes before any code of ours runs; one at the limit still gets
// REST's code.
func TestRequestSizeOverReceiveLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		cap   int
		limit int
	}{
		{"default cap", 0, assistant.DefaultMaxFileBytes + 1<<20},
		{"cap raised above the file size", 42 << 20, 43 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, fakeEngine{}, chatgrpc.Config{MaxRequestBytes: c.cap})
			ctx := authed(e.token(t, assistant.ScopeCorp))
			for _, s := range []struct {
				size int
				code codes.Code
			}{{c.limit, codes.InvalidArgument}, {c.limit + 1, codes.ResourceExhausted}} {
				_, err := e.chat.Chat(ctx, sized(t, s.size))
				if st := status.Convert(err); st.Code() != s.code {
					t.Errorf("%d bytes: got %v %q, want %v", s.size, st.Code(), st.Message(), s.code)
				}
			}
		})
	}
}

package chatgrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// panicEngine panics in the calls the service makes while serving a
// request, after answering the model list the token check needs.
type panicEngine struct{ fakeEngine }

func (panicEngine) Generate(context.Context, assistant.GenerateRequest, func(assistant.Delta) error) (assistant.Result, error) {
	panic("engine bug")
}

// A handler that panics answers INTERNAL and leaves the server serving:
// grpc-go recovers nothing by itself, and the process holds all three
// APIs.
func TestPanicIsInternal(t *testing.T) {
	e := start(t, panicEngine{}, chatgrpc.Config{})
	ctx := authed(e.token(t, assistant.ScopeCorp))
	calls := []struct {
		name string
		call func() error
	}{
		{"Chat", func() error { _, err := e.chat.Chat(ctx, chatReq("echo")); return err }},
		{"ChatStream", func() error {
			st, err := e.chat.ChatStream(ctx, chatReq("echo"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if st := status.Convert(c.call()); st.Code() != codes.Internal || st.Message() != "Internal Server Error" {
				t.Fatalf("got %v %q, want INTERNAL", st.Code(), st.Message())
			}
		})
	}
	if _, err := e.models.ListModels(ctx, &pb.ListModelsRequest{}); err != nil {
		t.Fatalf("the server stopped serving after the panics: %v", err)
	}
}

package chatgrpc_test

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// threeEngine streams its answer in three deltas.
type threeEngine struct{ fakeEngine }

func (threeEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	for _, text := range []string{"Once", " upon", " a time"} {
		if emit != nil {
			if err := emit(assistant.Delta{Text: text}); err != nil {
				return assistant.Result{}, err
			}
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: "Once upon a time", FinishReason: "stop"}}, Usage: assistant.Usage{PromptTokens: 1, CompletionTokens: 3}}, nil
}

// TestNonFiniteOptions: a proto float can be NaN or infinite, which JSON
// cannot carry, so only gRPC clients send them. NaN is outside every range
// of reference §3.2 and +Inf outside repetition_penalty's open (0, +inf):
// INVALID_ARGUMENT with REST's messages, for Chat and ChatStream alike,
// before any engine runs. An infinite update_interval is the longest
// pause: the first delta goes out, the rest with the end of the stream.
func TestNonFiniteOptions(t *testing.T) {
	e := start(t, threeEngine{}, chatgrpc.Config{})
	tok := e.token(t, assistant.ScopeCorp)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name string
		opts *pb.ChatOptions
		want string
	}{
		{"temperature NaN", &pb.ChatOptions{Temperature: &nan}, "Invalid params: temperature must be in range [0, 2]"},
		{"top_p NaN", &pb.ChatOptions{TopP: &nan}, "Invalid params: top_p must be in range [0, 1]"},
		{"repetition_penalty NaN", &pb.ChatOptions{RepetitionPenalty: &nan}, "Invalid params: repetition_penalty must be in range (0, +inf)"},
		{"repetition_penalty +Inf", &pb.ChatOptions{RepetitionPenalty: &inf}, "Invalid params: repetition_penalty must be in range (0, +inf)"},
		{"update_interval NaN", &pb.ChatOptions{UpdateInterval: &nan}, "Invalid params: update_interval must be a number of seconds, not NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := chatReq("echo")
			req.Options = tc.opts
			_, err := e.chat.Chat(authed(tok), req)
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != tc.want {
				t.Fatalf("Chat: %v %q, want InvalidArgument %q", st.Code(), st.Message(), tc.want)
			}
			stream, err := e.chat.ChatStream(authed(tok), req)
			if err == nil {
				var m *pb.ChatResponse
				m, err = stream.Recv()
				if err == nil {
					t.Fatalf("ChatStream sent %v", m)
				}
			}
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != tc.want {
				t.Fatalf("ChatStream: %v %q, want InvalidArgument %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
	t.Run("update_interval +Inf", func(t *testing.T) {
		req := chatReq("echo")
		req.Options = &pb.ChatOptions{UpdateInterval: &inf}
		stream, err := e.chat.ChatStream(authed(tok), req)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for {
			m, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("stream ended with %v", err)
				}
				break
			}
			texts = append(texts, m.GetAlternatives()[0].GetMessage().GetContent())
		}
		if len(texts) != 3 || texts[0] != "Once" || texts[1] != " upon a time" || texts[2] != "" {
			t.Fatalf("messages %q, want the first delta, the rest held back, and the empty final one", texts)
		}
	})
}

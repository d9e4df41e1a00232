package chatgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// fakeEngine serves "echo" (one delta, then stop), "slow" (one delta, then
// waits for the context), "broken" (fails), "strict" (its chat template
// refuses every conversation), "down" (no server of it can be reached) and
// "full" (every prompt is over its context window).
type fakeEngine struct{}

func (fakeEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	var out []assistant.ModelInfo
	for _, n := range []string{"echo", "slow", "broken", "strict", "down", "full"} {
		out = append(out, assistant.ModelInfo{Name: n, Version: "1", Type: "chat", ContextWindow: 64})
	}
	return out, nil
}

func (fakeEngine) CountTokens(context.Context, string, string) (int, error) { return 1, nil }

func (fakeEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	switch req.Model {
	case "broken":
		return assistant.Result{}, errors.New("boom")
	case "down":
		return assistant.Result{}, fmt.Errorf("upstream: %w: no replica of down answers", assistant.ErrUnavailable)
	case "strict":
		return assistant.Result{}, &assistant.TemplateError{Reason: "roles must alternate"}
	case "full":
		return assistant.Result{}, assistant.ErrContextWindow
	case "slow":
		if emit != nil {
			if err := emit(assistant.Delta{Text: "a"}); err != nil {
				return assistant.Result{}, err
			}
		}
		<-ctx.Done()
		return assistant.Result{}, ctx.Err()
	}
	if emit != nil {
		if err := emit(assistant.Delta{Text: "hi"}); err != nil {
			return assistant.Result{}, err
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: "hi", FinishReason: "stop"}}, Usage: assistant.Usage{PromptTokens: 3, CompletionTokens: 1}}, nil
}

func chatReq(model string) *pb.ChatRequest {
	return &pb.ChatRequest{Model: model, Messages: []*pb.Message{{Role: "user", Content: "x"}}}
}

// TestErrorCodes has one case per code of the mapping table (3, 4, 5, 7, 8,
// 13), each through the real server, and one per domain error that shares
// a code with others but has a message of its own.
func TestErrorCodes(t *testing.T) {
	e := start(t, fakeEngine{}, chatgrpc.Config{})
	corp := e.token(t, assistant.ScopeCorp)
	broke := e.token(t, assistant.ScopePers, assistant.Balance{Model: "echo", Tokens: 0})
	badTemp := chatReq("echo")
	badTemp.Options = &pb.ChatOptions{Temperature: proto.Float32(5)}
	badPenalty := chatReq("echo")
	badPenalty.Options = &pb.ChatOptions{RepetitionPenalty: proto.Float32(0)}
	badArgs := chatReq("echo")
	badArgs.Messages = append(badArgs.Messages, &pb.Message{Role: "assistant", FunctionCall: &pb.FunctionCall{Name: "f", Arguments: "[1"}})
	unanswered := chatReq("echo")
	unanswered.Messages = append(unanswered.Messages, &pb.Message{Role: "assistant", FunctionCall: &pb.FunctionCall{Name: "f", Arguments: "{}"}})
	badParams := chatReq("echo")
	badParams.Options = &pb.ChatOptions{Functions: []*pb.Function{{Name: "f", Parameters: "not json"}}}
	// echo does not support functions (REST's 422).
	withFunctions := chatReq("echo")
	withFunctions.Options = &pb.ChatOptions{Functions: []*pb.Function{{Name: "f", Parameters: `{"type":"object"}`}}}

	cases := []struct {
		name    string
		token   string
		timeout time.Duration
		call    func(ctx context.Context) error
		code    codes.Code
		message string
	}{
		{"bad temperature", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, badTemp); return err }, codes.InvalidArgument, "Invalid params: temperature must be in range [0, 2]"},
		{"repetition_penalty 0", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, badPenalty); return err }, codes.InvalidArgument, "Invalid params: repetition_penalty must be in range (0, +inf)"},
		{"function arguments not JSON", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, badArgs); return err }, codes.InvalidArgument, "Invalid params: messages[1].function_call.arguments must be a JSON object"},
		{"function parameters not JSON", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, badParams); return err }, codes.InvalidArgument, "Invalid params: functions[0].parameters must be a JSON object"},
		// The provider's own example of a refusal (assistant-grpc.md §4).
		{"function call without a result", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, unanswered); return err }, codes.InvalidArgument, "Invalid params: every assistant function call must have a result in history"},
		// REST's 413 and the 422 of functions, INVALID_ARGUMENT with REST's
		// message (assistant-grpc.md §4, §5).
		{"prompt over the window", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("full")); return err }, codes.InvalidArgument, "Payload too large"},
		{"prompt over the window stream", corp, 0, func(ctx context.Context) error {
			st, err := e.chat.ChatStream(ctx, chatReq("full"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.InvalidArgument, "Payload too large"},
		{"functions unsupported", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, withFunctions); return err }, codes.InvalidArgument, "Requested model does not support functions"},
		{"no messages", corp, 0, func(ctx context.Context) error {
			_, err := e.chat.Chat(ctx, &pb.ChatRequest{Model: "echo"})
			return err
		}, codes.InvalidArgument, "messages must not be empty"},
		{"deadline", corp, 200 * time.Millisecond, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("slow")); return err }, codes.DeadlineExceeded, ""},
		{"unknown model chat", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("nope")); return err }, codes.NotFound, "No such model"},
		{"unknown model retrieve", corp, 0, func(ctx context.Context) error {
			_, err := e.models.RetrieveModel(ctx, &pb.RetrieveModelRequest{Name: "echo:9"})
			return err
		}, codes.NotFound, "No such model"},
		{"unknown model stream", corp, 0, func(ctx context.Context) error {
			st, err := e.chat.ChatStream(ctx, chatReq("nope"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.NotFound, "No such model"},
		{"no token", "", 0, func(ctx context.Context) error {
			_, err := e.models.ListModels(ctx, &pb.ListModelsRequest{})
			return err
		}, codes.PermissionDenied, "Unauthorized"},
		{"bad token", "nope", 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("echo")); return err }, codes.PermissionDenied, "Unauthorized"},
		{"balance exhausted", broke, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("echo")); return err }, codes.ResourceExhausted, "Payment Required"},
		{"template refusal", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("strict")); return err }, codes.InvalidArgument, "Invalid params: roles must alternate"},
		{"template refusal stream", corp, 0, func(ctx context.Context) error {
			st, err := e.chat.ChatStream(ctx, chatReq("strict"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.InvalidArgument, "Invalid params: roles must alternate"},
		{"engine failure", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("broken")); return err }, codes.Internal, "Internal Server Error"},
		{"engine failure stream", corp, 0, func(ctx context.Context) error {
			st, err := e.chat.ChatStream(ctx, chatReq("broken"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.Internal, "Internal Server Error"},
		// REST's 503: the reference maps it, as "any other" status, to 13.
		{"backend unavailable", corp, 0, func(ctx context.Context) error { _, err := e.chat.Chat(ctx, chatReq("down")); return err }, codes.Internal, "Service Unavailable"},
		{"backend unavailable stream", corp, 0, func(ctx context.Context) error {
			st, err := e.chat.ChatStream(ctx, chatReq("down"))
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.Internal, "Service Unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.token != "" {
				ctx = authed(c.token)
			}
			if c.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.timeout)
				defer cancel()
			}
			st := status.Convert(c.call(ctx))
			if st.Code() != c.code || (c.message != "" && st.Message() != c.message) {
				t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), c.code, c.message)
			}
		})
	}
}

// TestAuthCodeSetting: an expired token answers 7 by default and 16 when
// configured.
func TestAuthCodeSetting(t *testing.T) {
	for _, code := range []codes.Code{codes.PermissionDenied, codes.Unauthenticated} {
		e := start(t, fakeEngine{}, chatgrpc.Config{AuthCode: code})
		tok := e.token(t, assistant.ScopeCorp)
		e.clock.Store(3600)
		_, err := e.chat.Chat(authed(tok), chatReq("echo"))
		if st := status.Convert(err); st.Code() != code || st.Message() != "Token has expired" {
			t.Fatalf("AuthCode %v: got %v %q", code, st.Code(), st.Message())
		}
	}
}

// TestStreamSlot: a PERS client's one slot is busy while its stream runs,
// answers 8 to a second call, and is free again once the stream is
// cancelled.
func TestStreamSlot(t *testing.T) {
	e := start(t, fakeEngine{}, chatgrpc.Config{})
	tok := e.token(t, assistant.ScopePers, assistant.Balance{Model: "slow", Tokens: 100}, assistant.Balance{Model: "echo", Tokens: 100})
	ctx, cancel := context.WithCancel(authed(tok))
	st, err := e.chat.ChatStream(ctx, chatReq("slow"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.Alternatives[0].Message.Content != "a" {
		t.Fatalf("first delta %v, %v", m, err)
	}
	_, err = e.chat.Chat(authed(tok), chatReq("echo"))
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || st.Message() != "Too Many Requests" {
		t.Fatalf("second call while streaming: %v", err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := e.chat.Chat(authed(tok), chatReq("echo"))
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after cancel: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBearerSchemeCase: the authorization metadata's scheme is read in any
// letter case, as over HTTP; a bare token (no client sends one:
// assistant-grpc.md §1) or another scheme is refused as Unauthorized (with
// the configured auth code).
func TestBearerSchemeCase(t *testing.T) {
	e := start(t, fakeEngine{}, chatgrpc.Config{})
	tok := e.token(t, assistant.ScopeCorp)
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"bearer " + tok, true}, {"BEARER " + tok, true}, {tok, false}, {"Basic " + tok, false}} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", tc.value)
		_, err := e.chat.Chat(ctx, chatReq("echo"))
		if got := err == nil; got != tc.ok {
			t.Errorf("%q: error %v, want success %v", tc.value, err, tc.ok)
		}
		if !tc.ok && status.Convert(err).Message() != "Unauthorized" {
			t.Errorf("%q: %v, want Unauthorized", tc.value, err)
		}
	}
}

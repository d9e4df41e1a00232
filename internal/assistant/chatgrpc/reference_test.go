package chatgrpc_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// This file asserts facts of assistant-grpc.md that no other test of the
// transport pins: the request ids of §1 on answers and refusals alike,
// and the model naming of §3 under both id styles.

// startConfigured is start for a service with its own configuration (the
// model id style), which start fixes.
func startConfigured(t *testing.T, engine assistant.Engine, cfg assistant.Config) *env {
	t.Helper()
	return startService(t, engine, cfg, chatgrpc.Config{}, nil)
}

// TestRequestIDsEchoed: the x-request-id and x-session-id a client sends
// come back in the header metadata as sent, on a refused call too, so
// that a refusal can be traced by its id; without them the server makes
// its own.
func TestRequestIDsEchoed(t *testing.T) {
	e := start(t, fakeEngine{}, chatgrpc.Config{})
	tok := e.token(t, assistant.ScopeCorp)
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		model string
		code  codes.Code
	}{
		{"answer", authed(tok), "echo", codes.OK},
		{"unknown model", authed(tok), "nope", codes.NotFound},
		{"no token", context.Background(), "echo", codes.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(tc.ctx, "x-request-id", "7a0c1f5e-req", "x-session-id", "conversation-42", "x-client-id", "client-9")
			var hdr metadata.MD
			_, err := e.chat.Chat(ctx, chatReq(tc.model), grpc.Header(&hdr))
			if status.Code(err) != tc.code {
				t.Fatalf("%v, want %v", err, tc.code)
			}
			if got := hdr.Get("x-request-id"); len(got) != 1 || got[0] != "7a0c1f5e-req" {
				t.Errorf("x-request-id %v, want the client's", got)
			}
			if got := hdr.Get("x-session-id"); len(got) != 1 || got[0] != "conversation-42" {
				t.Errorf("x-session-id %v, want the client's", got)
			}
			hdr = nil
			if _, err := e.chat.Chat(tc.ctx, chatReq(tc.model), grpc.Header(&hdr)); status.Code(err) != tc.code {
				t.Fatalf("without ids: %v, want %v", err, tc.code)
			}
			for _, k := range []string{"x-request-id", "x-session-id"} {
				if got := hdr.Get(k); len(got) != 1 || !assistant.IsUUID(got[0]) {
					t.Errorf("without ids: %s %v, want one made", k, got)
				}
			}
		})
	}
}

// TestModelNames: Model.name is REST's id, NAME:version by default and the
// bare name when so configured, while a chat's ModelInfo splits the name
// and version whatever the style and its timestamp is in Unix seconds
// (assistant-grpc.md §3).
func TestModelNames(t *testing.T) {
	for _, tc := range []struct {
		bare bool
		name string
	}{{false, "echo:1"}, {true, "echo"}} {
		e := startConfigured(t, fakeEngine{}, assistant.Config{BareIDs: tc.bare})
		ctx := authed(e.token(t, assistant.ScopeCorp))
		list, err := e.models.ListModels(ctx, &pb.ListModelsRequest{})
		if err != nil || len(list.Models) == 0 || list.Models[0].Name != tc.name || list.Models[0].Object != "model" || list.Models[0].Type != "chat" {
			t.Fatalf("bare %v: ListModels %v, %v; want first %q", tc.bare, list, err, tc.name)
		}
		for _, asked := range []string{"echo", "echo:latest", "echo:1"} {
			before := time.Now().Unix()
			got, err := e.models.RetrieveModel(ctx, &pb.RetrieveModelRequest{Name: asked})
			if err != nil || got.GetModel().GetName() != tc.name {
				t.Fatalf("bare %v: RetrieveModel(%s) %v, %v", tc.bare, asked, got, err)
			}
			res, err := e.chat.Chat(ctx, chatReq(asked))
			if err != nil || res.GetModelInfo().GetName() != "echo" || res.GetModelInfo().GetVersion() != "1" {
				t.Fatalf("bare %v: Chat(%s) %v, %v", tc.bare, asked, res, err)
			}
			// timestamp is REST's created, Unix seconds (§3).
			if ts := res.GetTimestamp(); ts < before || ts > time.Now().Unix() {
				t.Fatalf("bare %v: Chat(%s) timestamp %d, want Unix seconds from %d", tc.bare, asked, ts, before)
			}
		}
	}
}

// breakingEngine sends one delta of its model "breaks" and then fails.
type breakingEngine struct{ fakeEngine }

func (breakingEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if emit != nil {
		if err := emit(assistant.Delta{Text: "Once"}); err != nil {
			return assistant.Result{}, err
		}
	}
	return assistant.Result{}, errors.New("the engine broke")
}

// TestStreamFailsAfterFirstMessage: a failure once messages have gone out
// ends the call with INTERNAL in the trailers, after the text already
// sent and with no final message claiming a finish (assistant-grpc.md §4).
func TestStreamFailsAfterFirstMessage(t *testing.T) {
	e := start(t, breakingEngine{}, chatgrpc.Config{})
	st, err := e.chat.ChatStream(authed(e.token(t, assistant.ScopeCorp)), chatReq("echo"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Recv()
	if err != nil || m.Alternatives[0].Message.Content != "Once" || m.Alternatives[0].FinishReason != "" {
		t.Fatalf("first message %v, %v", m, err)
	}
	m, err = st.Recv()
	if s := status.Convert(err); m != nil || s.Code() != codes.Internal || s.Message() != "Internal Server Error" {
		t.Fatalf("after the failure: %v, %v; want INTERNAL and no message", m, err)
	}
}

// stutteringEngine sends two deltas of its model and then fails.
type stutteringEngine struct{ fakeEngine }

func (stutteringEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	for _, text := range []string{"Once", " upon"} {
		if emit != nil {
			if err := emit(assistant.Delta{Text: text}); err != nil {
				return assistant.Result{}, err
			}
		}
	}
	return assistant.Result{}, errors.New("the engine broke")
}

// TestStreamFailsInAnInterval: text that update_interval held back when
// the generation failed goes out before the status, as it would have
// without the interval; the status is still INTERNAL in the trailers.
func TestStreamFailsInAnInterval(t *testing.T) {
	e := start(t, stutteringEngine{}, chatgrpc.Config{})
	req := chatReq("echo")
	req.Options = &pb.ChatOptions{UpdateInterval: proto.Float32(60)}
	st, err := e.chat.ChatStream(authed(e.token(t, assistant.ScopeCorp)), req)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for {
		m, err := st.Recv()
		if err != nil {
			if s := status.Convert(err); s.Code() != codes.Internal {
				t.Fatalf("status %v, want INTERNAL", err)
			}
			break
		}
		if m.Alternatives[0].FinishReason != "" {
			t.Fatalf("a message claims a finish: %v", m)
		}
		text += m.Alternatives[0].Message.Content
	}
	if text != "Once upon" {
		t.Fatalf("text %q before the failure, want %q", text, "Once upon")
	}
}

// cachedEngine answers as an engine that reused 30 of a prompt's 40
// tokens from its cache.
type cachedEngine struct{ fakeEngine }

func (cachedEngine) Generate(_ context.Context, _ assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if emit != nil {
		if err := emit(assistant.Delta{Text: "hi"}); err != nil {
			return assistant.Result{}, err
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: "hi", FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 40, CompletionTokens: 20, PrecachedPromptTokens: 30}}, nil
}

// TestUsageLeavesOutCachedTokens: as over REST, prompt_tokens leaves out
// the tokens reused from the cache, so that total_tokens is what the
// client is billed (reference §3.3), in Chat and in ChatStream's final
// message.
func TestUsageLeavesOutCachedTokens(t *testing.T) {
	e := start(t, cachedEngine{}, chatgrpc.Config{})
	ctx := authed(e.token(t, assistant.ScopeCorp))
	want := &pb.Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30}
	res, err := e.chat.Chat(ctx, chatReq("echo"))
	if err != nil || !proto.Equal(res.Usage, want) {
		t.Fatalf("Chat usage %v, %v; want %v", res.GetUsage(), err, want)
	}
	st, err := e.chat.ChatStream(ctx, chatReq("echo"))
	if err != nil {
		t.Fatal(err)
	}
	var last *pb.ChatResponse
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		last = m
	}
	if last == nil || !proto.Equal(last.Usage, want) {
		t.Fatalf("ChatStream's final usage %v, want %v", last.GetUsage(), want)
	}
}

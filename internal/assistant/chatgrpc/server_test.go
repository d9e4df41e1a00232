package chatgrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatapi"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/testenv"
)

func realEngine(t *testing.T) assistant.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	// No prefix cache: the tests compare the usage of requests on one
	// prompt, and prompt_tokens leaves out what a cache reuses.
	eng, err := local.Open(dir, local.Options{PrefixCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func greedy(model string, max int32) *pb.ChatRequest {
	return &pb.ChatRequest{
		Model:    model,
		Options:  &pb.ChatOptions{Temperature: proto.Float32(0), MaxTokens: proto.Int32(max)},
		Messages: []*pb.Message{{Role: "user", Content: "Once upon a time"}},
	}
}

func TestModelsChatAndStream(t *testing.T) {
	e := start(t, realEngine(t), chatgrpc.Config{})
	ctx := authed(e.token(t, assistant.ScopeCorp))

	list, err := e.models.ListModels(ctx, &pb.ListModelsRequest{})
	if err != nil || len(list.Models) != 1 || list.Models[0].Name != "stories260K:1.0" || list.Models[0].Object != "model" || list.Models[0].Type != "chat" {
		t.Fatalf("ListModels = %v, %v", list, err)
	}
	for _, name := range []string{"stories260K", "stories260K:latest", "stories260K:1.0"} {
		got, err := e.models.RetrieveModel(ctx, &pb.RetrieveModelRequest{Name: name})
		if err != nil || got.Model.GetName() != "stories260K:1.0" {
			t.Fatalf("RetrieveModel(%s) = %v, %v", name, got, err)
		}
	}

	var hdr metadata.MD
	rctx := metadata.AppendToOutgoingContext(ctx, "x-request-id", "req-42")
	unary, err := e.chat.Chat(rctx, greedy("stories260K", 16), grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("x-request-id"); len(got) != 1 || got[0] != "req-42" {
		t.Errorf("x-request-id = %v, want echo", got)
	}
	if len(hdr.Get("x-session-id")) != 1 {
		t.Errorf("x-session-id missing: %v", hdr)
	}
	alt := unary.Alternatives[0]
	u := unary.Usage
	if alt.Message.Role != "assistant" || alt.Message.Content == "" || alt.FinishReason != "length" || alt.Index != 0 ||
		u.CompletionTokens != 16 || u.TotalTokens != u.PromptTokens+16 || unary.ModelInfo.GetName() != "stories260K" || unary.Timestamp == 0 {
		t.Fatalf("Chat = %v", unary)
	}

	st, err := e.chat.ChatStream(ctx, greedy("stories260K", 16))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var msgs []*pb.ChatResponse
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) < 3 {
		t.Fatalf("stream sent %d messages, want one per delta and a final one", len(msgs))
	}
	for _, m := range msgs[:len(msgs)-1] {
		a := m.Alternatives[0]
		if a.Message.Role != "assistant" || a.Message.Content == "" || a.FinishReason != "" || m.Usage != nil {
			t.Fatalf("delta message %v", m)
		}
		text += a.Message.Content
	}
	final := msgs[len(msgs)-1]
	if fa := final.Alternatives[0]; fa.Message.Content != "" || fa.Message.Role != "assistant" || fa.FinishReason != "length" || !proto.Equal(final.Usage, unary.Usage) {
		t.Fatalf("final message %v", final)
	}
	if text != alt.Message.Content {
		t.Fatalf("stream text %q != unary %q", text, alt.Message.Content)
	}

	// update_interval batches deltas: a long interval leaves one text message.
	req := greedy("stories260K", 16)
	req.Options.UpdateInterval = proto.Float32(60)
	st, err = e.chat.ChatStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		if c := m.Alternatives[0].Message.Content; c != "" && n == 1 && !bytes.HasPrefix([]byte(text), []byte(c)) {
			t.Fatalf("first batched message %q is not a prefix of %q", c, text)
		}
	}
	// The first delta goes out at once; the rest wait for the interval and
	// are flushed at the end, then the final message.
	if n != 3 {
		t.Fatalf("update_interval=60: %d messages, want 3", n)
	}

	health, err := healthpb.NewHealthClient(e.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "gigachat.v1.ChatService"})
	if err != nil || health.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", health, err)
	}
}

// TestRESTAndGRPCAgree sends the same greedy request to both transports of
// one service.
func TestRESTAndGRPCAgree(t *testing.T) {
	e := start(t, realEngine(t), chatgrpc.Config{})
	tok := e.token(t, assistant.ScopeCorp)
	rest := httptest.NewServer(chatapi.NewServer(chatapi.Deps{Service: e.svc}))
	defer rest.Close()
	body := `{"model":"stories260K","temperature":0,"max_tokens":24,"messages":[{"role":"user","content":"Once upon a time"}]}`
	hr, _ := http.NewRequest("POST", rest.URL+"/api/v1/chat/completions", bytes.NewBufferString(body))
	hr.Header.Set("Authorization", "Bearer "+tok)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rj struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int32 `json:"prompt_tokens"`
			CompletionTokens int32 `json:"completion_tokens"`
			TotalTokens      int32 `json:"total_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&rj); err != nil || resp.StatusCode != 200 || len(rj.Choices) != 1 {
		t.Fatalf("REST: %d %+v %v", resp.StatusCode, rj, err)
	}
	g, err := e.chat.Chat(authed(tok), greedy("stories260K", 24))
	if err != nil {
		t.Fatal(err)
	}
	ga := g.Alternatives[0]
	if ga.Message.Content != rj.Choices[0].Message.Content || ga.FinishReason != rj.Choices[0].FinishReason {
		t.Errorf("gRPC %q/%s, REST %q/%s", ga.Message.Content, ga.FinishReason, rj.Choices[0].Message.Content, rj.Choices[0].FinishReason)
	}
	if g.Usage.PromptTokens != rj.Usage.PromptTokens || g.Usage.CompletionTokens != rj.Usage.CompletionTokens || g.Usage.TotalTokens != rj.Usage.TotalTokens {
		t.Errorf("gRPC usage %v, REST %+v", g.Usage, rj.Usage)
	}
}

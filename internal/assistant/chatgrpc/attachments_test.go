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

// echoEngine answers with the last message's content, so a test reads what
// the service made of the messages.
type echoEngine struct{}

func (echoEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "m", Version: "1.0", Type: assistant.TypeChat, ContextWindow: 4096}}, nil
}
func (echoEngine) CountTokens(_ context.Context, _ string, text string) (int, error) {
	return len(text), nil
}
func (echoEngine) Generate(_ context.Context, req assistant.GenerateRequest, _ func(assistant.Delta) error) (assistant.Result, error) {
	last := req.Messages[len(req.Messages)-1]
	return assistant.Result{Choices: []assistant.Choice{{Text: last.Content, FinishReason: "stop"}}, Usage: assistant.Usage{PromptTokens: 1, CompletionTokens: 1}}, nil
}

// Message.attachments (field 11) name uploaded files over gRPC as in REST:
// a text file's content goes into the message, an unknown id is
// InvalidArgument (REST's 400), an image too (REST's 422).
func TestAttachmentsOverGRPC(t *testing.T) {
	e := start(t, echoEngine{}, chatgrpc.Config{})
	tok := e.token(t, assistant.ScopeCorp)
	p, err := e.svc.Authenticate(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := e.svc.UploadFile(context.Background(), p, "notes.txt", "general", "text/plain", []byte("Blue."))
	if err != nil {
		t.Fatal(err)
	}
	image, err := e.svc.UploadFile(context.Background(), p, "a.png", "general", "image/png", []byte("\x89PNG"))
	if err != nil {
		t.Fatal(err)
	}
	req := func(ids ...string) *pb.ChatRequest {
		return &pb.ChatRequest{Model: "m", Messages: []*pb.Message{{Role: "user", Content: "Who?", Attachments: ids}}}
	}
	resp, err := e.chat.Chat(authed(tok), req(notes.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetAlternatives()[0].GetMessage().GetContent(); got != "Who?\n\nnotes.txt:\nBlue." {
		t.Fatalf("the model saw %q", got)
	}
	for _, ids := range [][]string{{"nope"}, {image.ID}} {
		if _, err := e.chat.Chat(authed(tok), req(ids...)); status.Code(err) != codes.InvalidArgument {
			t.Errorf("attachments %v: %v, want InvalidArgument", ids, err)
		}
	}
}

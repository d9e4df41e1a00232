package local

import (
	"context"
	"testing"

	"partnerapi/internal/assistant"
)

// TestGenerateRecordsTimeToFirstToken checks that every answered call is
// one observation of its model's histogram, and a refused one none.
func TestGenerateRecordsTimeToFirstToken(t *testing.T) {
	e := openEngine(t, "", Options{})
	for range 2 {
		if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 3, N: 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("x"), MaxTokens: 3}, nil); err != nil {
		t.Fatal(err)
	}
	e.models["stories260K"].info.ContextWindow = 1
	if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time")}, nil); err == nil {
		t.Fatal("a prompt over the window was accepted")
	}
	h := e.Stats()[0].TimeToFirstToken
	if h.Count != 3 || h.Sum <= 0 || h.Buckets[60] != 3 {
		t.Errorf("histogram %+v, want 3 observations", h)
	}
}

package assistant_test

import (
	"reflect"
	"testing"

	"partnerapi/internal/assistant"
)

// TestTopPReachesEngine checks that the engine can tell a client's explicit
// top_p 0 (only the most probable token) from a request without top_p.
func TestTopPReachesEngine(t *testing.T) {
	zero, half, one := 0.0, 0.5, 1.0
	tests := []struct {
		name    string
		topP    *float64
		want    float64
		wantSet bool
	}{
		{"not given: the default", nil, assistant.DefaultTopP, false},
		{"explicit 0", &zero, 0, true},
		{"explicit 0.5", &half, 0.5, true},
		{"explicit 1", &one, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got assistant.GenerateRequest
			if _, _, err := runChat(t, textEngine{pieces: []string{"ok"}, got: &got}, assistant.ChatRequest{TopP: tc.topP}); err != nil {
				t.Fatal(err)
			}
			if got.TopP != tc.want || got.TopPSet != tc.wantSet {
				t.Errorf("engine got top_p %v (set %v), want %v (set %v)", got.TopP, got.TopPSet, tc.want, tc.wantSet)
			}
		})
	}
}

// TestDefaultsReachEngine: a request that names no parameter is generated
// with the reference's defaults (§3.2: temperature 0.87, top_p 0.47, one
// choice, max_tokens 512, repetition_penalty 1.07) and, with no functions,
// the function_call mode auto; the parameters it names reach the engine
// as given.
func TestDefaultsReachEngine(t *testing.T) {
	var got assistant.GenerateRequest
	if _, _, err := runChat(t, textEngine{pieces: []string{"ok"}, got: &got}, assistant.ChatRequest{}); err != nil {
		t.Fatal(err)
	}
	want := assistant.GenerateRequest{Model: "qwen", Temperature: 0.87, TopP: 0.47, N: 1, MaxTokens: 512, RepetitionPenalty: 1.07,
		FunctionCall: assistant.FunctionChoice{Mode: assistant.FunctionCallAuto}}
	got.Messages = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("engine got %+v, want %+v", got, want)
	}
	temp, topP, n, maxTokens, penalty := 0.0, 1.0, 3, 7, 1.0
	if _, _, err := runChat(t, textEngine{pieces: []string{"ok"}, got: &got}, assistant.ChatRequest{Temperature: &temp, TopP: &topP,
		N: &n, MaxTokens: &maxTokens, RepetitionPenalty: &penalty}); err != nil {
		t.Fatal(err)
	}
	if got.Temperature != 0 || got.TopP != 1 || !got.TopPSet || got.N != 3 || got.MaxTokens != 7 || got.RepetitionPenalty != 1 {
		t.Fatalf("engine got %+v", got)
	}
}

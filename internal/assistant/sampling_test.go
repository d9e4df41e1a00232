package assistant_test

import (
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

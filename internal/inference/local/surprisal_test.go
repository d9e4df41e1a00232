package local

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"partnerapi/internal/assistant"
)

// Text stories260K wrote itself (greedy) surprises it far less than a
// person's technical prose, on either side of the AI check's threshold;
// every token after the first is scored and the character ends climb to
// the text's length.
func TestSurprisal(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, "", Options{})
	res, err := e.Generate(ctx, assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 80, N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	generated := res.Choices[0].Text
	human := "Every benchmark prints ratios measured side by side in one run, against the memory bandwidth it measures."
	mean := func(text string) float64 {
		t.Helper()
		toks, err := e.Surprisal(ctx, "stories260K", text)
		if err != nil {
			t.Fatal(err)
		}
		ids := e.models["stories260K"].Tokenizer.Encode(text, false, false)
		if len(toks) != len(ids)-1 {
			t.Fatalf("%d scored tokens for %d", len(toks), len(ids))
		}
		var sum float64
		prev := 0
		for _, tok := range toks {
			if tok.End < prev || tok.NLL < 0 {
				t.Fatalf("token %+v after end %d", tok, prev)
			}
			prev = tok.End
			sum += tok.NLL
		}
		if prev != utf8.RuneCountInString(text) {
			t.Fatalf("last end %d of %d characters", prev, utf8.RuneCountInString(text))
		}
		return sum / float64(len(toks))
	}
	// Longer than one scored piece (scorePiece tokens): positions and
	// character ends carry across the pieces.
	if long := strings.Repeat(human+" ", 8); len(e.models["stories260K"].Tokenizer.Encode(long, true, false)) <= scorePiece {
		t.Fatal("the long text fits one piece")
	} else {
		mean(long)
	}
	g, h := mean(generated), mean(human)
	t.Logf("mean surprisal: generated %.2f nats, human %.2f", g, h)
	if !(g < assistant.AICheckThreshold && h > assistant.AICheckThreshold) {
		t.Fatalf("generated %.2f, human %.2f: not on either side of %.1f\n%q", g, h, assistant.AICheckThreshold, generated)
	}
	if _, err := e.Surprisal(ctx, "stories260K", "a"); err == nil {
		t.Fatal("a one-token text was scored")
	}
	if _, err := e.Surprisal(ctx, "nope", "two words"); !errors.Is(err, assistant.ErrNoSuchModel) {
		t.Fatalf("unknown model: %v", err)
	}
}

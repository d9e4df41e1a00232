package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/model"
)

var _ assistant.Scorer = (*Engine)(nil)

// Surprisal implements assistant.Scorer for a chat model: the text is
// tokenized as a prompt (BOS added) and run through a sequence of its own
// in prefill chunks that keep every position's logits (ForwardEach), and
// each token after the first gets −log p of it given those before, from
// the full softmax of the logits that predicted it. Like embeddings it runs outside the chat scheduler in one of the
// model's slots (the weights are read-only; the sequence is the call's).
func (e *Engine) Surprisal(ctx context.Context, name, text string) ([]assistant.TokenSurprisal, error) {
	s, ok := e.models[name]
	if !ok {
		return nil, assistant.ErrNoSuchModel
	}
	if s.info.Type != assistant.TypeChat {
		return nil, assistant.ErrNoAICheck
	}
	ids := s.Tokenizer.Encode(text, true, false)
	first := 0
	if len(ids) > 0 && ids[0] == s.Tokenizer.BOS() && s.Tokenizer.AddsBOS() {
		first = 1
	}
	if len(ids)-first < 2 {
		return nil, &assistant.InvalidParams{Status: 400, Message: "input must have at least two tokens"}
	}
	if len(ids) > s.info.ContextWindow {
		return nil, fmt.Errorf("%w: %d tokens, the window %d", assistant.ErrContextWindow, len(ids), s.info.ContextWindow)
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	seq := s.Net.NewSequence(len(ids))
	defer seq.Release()
	out := make([]assistant.TokenSurprisal, 0, len(ids)-first-1)
	chars := utf8.RuneCountInString(text)
	// The characters up to each token's end come from decoding the text's
	// tokens in order (the stream decoder drops SPM's leading space, as
	// the text has none, and holds back split characters).
	dec := s.Tokenizer.NewStreamDecoder()
	done := utf8.RuneCountInString(dec.Add(ids[first]))
	// The last token predicts nothing that is scored. ctx is checked
	// between pieces of scorePiece tokens.
	read := ids[:len(ids)-1]
	for from := 0; from < len(read); from += scorePiece {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := seq.ForwardEach(read[from:min(from+scorePiece, len(read))], func(j int, logits []float32) {
			i := from + j
			if i < first {
				return // the BOS predicts the first token, which is not scored
			}
			done += utf8.RuneCountInString(dec.Add(ids[i+1]))
			out = append(out, assistant.TokenSurprisal{End: min(done, chars), NLL: negLogProb(logits, ids[i+1])})
		})
		if errors.Is(err, model.ErrContextFull) {
			return nil, fmt.Errorf("%w: %v", assistant.ErrContextWindow, err)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scorePiece is how many tokens Surprisal runs between checks of its
// context: four prefill chunks.
const scorePiece = 256

// negLogProb is −log softmax(logits)[id], with the log-sum-exp taken from
// the largest logit so no exponential overflows.
func negLogProb(logits []float32, id int) float64 {
	mx := float64(logits[0])
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(sum) - float64(logits[id])
}

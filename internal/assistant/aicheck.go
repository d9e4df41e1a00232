package assistant

import (
	"context"
	"errors"
	"unicode/utf8"
)

// Scorer is an engine that can tell how surprising each token of a text is
// to one of its models: what POST /ai/check reads (reference §3.9).
type Scorer interface {
	Surprisal(ctx context.Context, model, text string) ([]TokenSurprisal, error)
}

// TokenSurprisal is one token of a scored text after the first: NLL is
// −log p(token | the tokens before it) in nats, End the number of the
// text's characters (runes) up to the token's end.
type TokenSurprisal struct {
	End int
	NLL float64
}

// AICheckResult is the answer of POST /ai/check: intervals are 1-based,
// inclusive character ranges judged machine-written.
type AICheckResult struct {
	Category    string // ai | human | mixed
	Characters  int
	Tokens      int
	AIIntervals [][2]int
}

// AI-check defaults. A text a model generated is likely to that model, so
// its tokens are far less surprising than a person's: a window of
// AICheckWindow tokens whose mean surprisal is under AICheckThreshold nats
// (a perplexity of e^2.3 ≈ 10) counts as generated. This is the
// perplexity test of detectors such as GPTZero, read with the model the
// request names; it judges text that model or a similar one wrote.
const (
	AICheckWindow    = 8
	AICheckThreshold = 2.3
)

// ErrNoAICheck is a model that cannot score text (an embedder, an upstream
// server's model).
var ErrNoAICheck = errors.New("requested model does not support ai check")

// PrepareAICheck validates an AI check, resolves its model and checks the
// client's funds, so that a refusal is the request's own answer and not a
// 429 of a client whose slots are taken (the transport takes a slot only
// after it), as PrepareChat and PrepareEmbed do.
func (s *Service) PrepareAICheck(ctx context.Context, p Principal, model, input string) (ModelInfo, error) {
	if input == "" {
		return ModelInfo{}, badRequest("input is required")
	}
	if model == "" {
		return ModelInfo{}, badRequest("model is required")
	}
	m, err := s.ResolveModel(ctx, model)
	if err != nil {
		return ModelInfo{}, err
	}
	if _, ok := s.engine.(Scorer); !ok || m.Type != TypeChat {
		return ModelInfo{}, ErrNoAICheck
	}
	return m, s.checkFunds(ctx, p, m.Name)
}

// AICheck judges which parts of input a prepared model would have written.
func (s *Service) AICheck(ctx context.Context, p Principal, m ModelInfo, input string) (AICheckResult, error) {
	sc, ok := s.engine.(Scorer)
	if !ok {
		return AICheckResult{}, ErrNoAICheck
	}
	toks, err := sc.Surprisal(ctx, m.Name, input)
	if err != nil {
		return AICheckResult{}, err
	}
	res := judgeSurprisal(toks, utf8.RuneCountInString(input), s.cfg.aiCheckThreshold())
	if err := s.bill(context.WithoutCancel(ctx), p, m.Name, Usage{PromptTokens: res.Tokens}); err != nil {
		return AICheckResult{}, err
	}
	return res, nil
}

func (c Config) aiCheckThreshold() float64 {
	if c.AICheckThreshold > 0 {
		return c.AICheckThreshold
	}
	return AICheckThreshold
}

// judgeSurprisal cuts the scored tokens into windows of AICheckWindow (the
// last one takes the remainder when it is at least half a window, else it
// joins the one before), marks the windows whose mean surprisal is under
// threshold, and merges neighbouring marked windows into character
// intervals. The first token, which nothing predicts, belongs to the first
// window's characters.
func judgeSurprisal(toks []TokenSurprisal, chars int, threshold float64) AICheckResult {
	res := AICheckResult{Characters: chars, Tokens: len(toks) + 1, AIIntervals: [][2]int{}}
	var bounds []int
	for i := 0; i < len(toks); i += AICheckWindow {
		bounds = append(bounds, i)
	}
	if n := len(bounds); n > 1 && len(toks)-bounds[n-1] < AICheckWindow/2 {
		bounds = bounds[:n-1]
	}
	covered := 0
	for w, from := range bounds {
		to := len(toks)
		if w+1 < len(bounds) {
			to = bounds[w+1]
		}
		var sum float64
		for _, t := range toks[from:to] {
			sum += t.NLL
		}
		if sum/float64(to-from) >= threshold {
			continue
		}
		start := 1
		if from > 0 {
			start = toks[from-1].End + 1
		}
		end := min(toks[to-1].End, chars)
		if w+1 == len(bounds) {
			end = chars
		}
		if start > end {
			continue
		}
		if n := len(res.AIIntervals); n > 0 && res.AIIntervals[n-1][1]+1 >= start {
			res.AIIntervals[n-1][1] = end
		} else {
			res.AIIntervals = append(res.AIIntervals, [2]int{start, end})
		}
		covered += end - start + 1
	}
	switch {
	case covered == 0:
		res.Category = "human"
	case covered >= chars:
		res.Category = "ai"
	default:
		res.Category = "mixed"
	}
	return res
}

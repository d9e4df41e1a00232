package chatapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant/upstream"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// These tests abandon requests without streaming while an upstream (a
// pool of one fake llama-server) generates them: the upstream reports no
// usage on a cut, and no delta is relayed to count, so the engine has to
// count what it read of the upstream's stream. The fake counts a token a
// word: the prompt "hi there" is 2.

const (
	upRole = `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
	upOnce = `{"choices":[{"index":0,"delta":{"content":"Once upon"}}]}`
	upTime = `{"choices":[{"index":0,"delta":{"content":" a time"}}]}`
	upLong = `{"choices":[{"index":0,"delta":{"content":"one two three four five six"}}]}`
	// upEnd finishes the stream with the upstream's own usage, which
	// differs from any count of the text, so a test sees which one was
	// billed.
	upEnd    = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":17,"completion_tokens":3}}`
	upPrompt = 2
)

// upstreamFixture serves the model "m" from a pool of the fake upstream.
func upstreamFixture(t *testing.T, script func(int) upstreamtest.Chat) (*fixture, *upstreamtest.Server) {
	srv := upstreamtest.New(t, script)
	pool := upstream.NewPool("m", upstream.Served{}, []string{srv.URL}, upstream.PoolOptions{Client: srv.Client, ProbeInterval: time.Hour})
	t.Cleanup(pool.Close)
	return newFixtureWith(t, pool), srv
}

// abandon sends a chat without streaming and cancels it once the engine
// has read the upstream's stream up to its marker. It reports whether the
// answer came back before the cancellation took.
func abandon(t *testing.T, f *fixture, srv *upstreamtest.Server, tok string, maxTokens int) (answered bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi there"}],"max_tokens":`+strconv.Itoa(maxTokens)+`}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = errors.New("answered " + resp.Status)
			}
		}
		done <- err
	}()
	select {
	case <-srv.Read:
	case err := <-done:
		t.Fatalf("the request ended before the upstream's stream was read: %v", err)
	}
	cancel()
	err := <-done
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned request: %v", err)
	}
	return err == nil
}

// TestUpstreamCutJSONRequestIsBilled abandons a request without streaming
// after the upstream streamed some of the answer: the prepaid balance goes
// down by the prompt and the tokens received, no more than max_tokens of
// them; one abandoned before the upstream streamed any of the answer (a
// role alone is none) bills nothing, as the service's own rule for a cut
// before the first delta says.
func TestUpstreamCutJSONRequestIsBilled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		events    []string
		maxTokens int
		want      int64
	}{
		{"after two deltas", []string{upRole, upOnce, upTime}, 100, upPrompt + 4},
		{"at most max_tokens", []string{upRole, upLong}, 3, upPrompt + 3},
		{"before any delta", []string{upRole}, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := upstreamFixture(t, func(int) upstreamtest.Chat {
				return upstreamtest.Chat{Events: tc.events, Pause: -1}
			})
			p, tok := persClient(t, f, "m")
			if abandon(t, f, srv, tok, tc.maxTokens) {
				t.Fatal("the upstream answered a chat it never finished")
			}
			if spent := spentAfter(t, f.svc, p, "m"); spent != tc.want {
				t.Fatalf("billed %d tokens, want %d", spent, tc.want)
			}
		})
	}
}

// TestUpstreamCutBillRace cancels requests as the upstream finishes them,
// the finish coming at once or after a few milliseconds: each is billed
// once, either as finished (the upstream's usage, also when the cut came
// between its usage and [DONE]) or as cut (the prompt and the text read),
// never both and never nothing.
func TestUpstreamCutBillRace(t *testing.T) {
	pauses := []time.Duration{0, 0, time.Millisecond, 2 * time.Millisecond, 20 * time.Millisecond}
	const rounds = 20
	f, srv := upstreamFixture(t, func(i int) upstreamtest.Chat {
		return upstreamtest.Chat{Events: []string{upRole, upOnce, upTime}, Pause: pauses[i%len(pauses)], Then: []string{upEnd, "[DONE]"}}
	})
	p, tok := persClient(t, f, "m")
	const finished, cut = 17 + 3, upPrompt + 4
	var before int64
	outcomes := map[int64]int{}
	for i := range rounds {
		answered := abandon(t, f, srv, tok, 100)
		spent := spentAfter(t, f.svc, p, "m")
		bill := spent - before
		before = spent
		outcomes[bill]++
		if bill != finished && bill != cut || answered && bill != finished {
			t.Fatalf("round %d (pause %v, answered %v) billed %d tokens, want %d finished or %d cut", i, pauses[i%len(pauses)], answered, bill, finished, cut)
		}
	}
	t.Logf("bills over %d rounds: %v", rounds, outcomes)
}

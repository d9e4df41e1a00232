package model

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// embedTokens is a deterministic input longer than two prefill chunks, so
// that Embed's chunk loop and its last, partial chunk are exercised.
func embedTokens(n int) []int {
	out := []int{1}
	for i := 1; i < n; i++ {
		out = append(out, 3+(i*37+11)%509)
	}
	return out
}

// tokenByTokenStates feeds tokens one at a time through Sequence.Forward and
// collects, after each, the output-normed hidden state the existing logits
// path computed for that single row: a second path to every token's
// final hidden state that shares nothing with Embed's own normalisation of
// a chunk's rows.
func tokenByTokenStates(t *testing.T, m *Model, tokens []int) [][]float32 {
	t.Helper()
	seq := m.NewSequence(0)
	var states [][]float32
	for _, tok := range tokens {
		if _, err := seq.Forward([]int{tok}); err != nil {
			t.Fatal(err)
		}
		states = append(states, slices.Clone(seq.own.normd[:m.NEmbd]))
	}
	return states
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(ss))
	}
	return out
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func TestEmbedPoolingMatchesTokenByTokenStates(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	tokens := embedTokens(2*prefillChunk + 19)
	states := tokenByTokenStates(t, m, tokens)
	mean := make([]float32, m.NEmbd)
	for _, h := range states {
		for i, v := range h {
			mean[i] += v / float32(len(states))
		}
	}
	for _, tc := range []struct {
		pool Pooling
		want []float32
	}{
		{PoolingMean, unit(mean)},
		{PoolingCLS, unit(states[0])},
		{PoolingLast, unit(states[len(states)-1])},
	} {
		t.Run(tc.pool.String(), func(t *testing.T) {
			got, err := m.Embed(context.Background(), tokens, tc.pool)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != m.NEmbd {
				t.Fatalf("length %d, want n_embd %d", len(got), m.NEmbd)
			}
			if d := maxAbsDiff(got, tc.want); d > 1e-5 {
				t.Errorf("differs from the token-by-token states by %g", d)
			}
			var ss float64
			for _, v := range got {
				ss += float64(v) * float64(v)
			}
			if math.Abs(ss-1) > 1e-5 {
				t.Errorf("squared norm %v, want 1", ss)
			}
		})
	}
}

func TestEmbedDeterministicAndSensitiveToEveryToken(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	ctx := context.Background()
	base := embedTokens(40)
	a, err := m.Embed(ctx, base, PoolingMean)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Embed(ctx, slices.Clone(base), PoolingMean)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, again) {
		t.Error("the same tokens gave different vectors")
	}
	otherEnd := slices.Clone(base)
	otherEnd[len(otherEnd)-1] = 3 + (otherEnd[len(otherEnd)-1]+1)%509
	for _, pool := range []Pooling{PoolingMean, PoolingLast} {
		x, _ := m.Embed(ctx, base, pool)
		y, err := m.Embed(ctx, otherEnd, pool)
		if err != nil {
			t.Fatal(err)
		}
		if maxAbsDiff(x, y) < 1e-4 {
			t.Errorf("%v: a different last token left the vector unchanged", pool)
		}
	}
	// CLS pooling sees only the first token: a causal model's first row
	// cannot depend on what follows.
	x, _ := m.Embed(ctx, base, PoolingCLS)
	y, _ := m.Embed(ctx, otherEnd, PoolingCLS)
	if !slices.Equal(x, y) {
		t.Error("cls pooling depends on later tokens")
	}
}

func TestEmbedRefusals(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		tokens []int
		pool   Pooling
		is     error
	}{
		{"empty", context.Background(), nil, PoolingMean, nil},
		{"over the context", context.Background(), embedTokens(m.NCtx + 1), PoolingMean, ErrContextFull},
		{"token out of range", context.Background(), []int{1, m.NVocab}, PoolingMean, nil},
		{"unknown pooling", context.Background(), []int{1}, Pooling(4), nil},
		{"cancelled", cancelled, []int{1, 2}, PoolingMean, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := m.Embed(tc.ctx, tc.tokens, tc.pool)
			if err == nil {
				t.Fatalf("no error, vector %v", v)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
		})
	}
}

// poolingFile writes a tensor-less GGUF holding only the architecture and,
// when v is not nil, a pooling type.
func poolingFile(t *testing.T, v *gguf.Value) *gguf.File {
	t.Helper()
	kvs := []gguf.KV{{Key: "general.architecture", Value: gguf.StringValue("qwen2")}}
	if v != nil {
		kvs = append(kvs, gguf.KV{Key: "qwen2.pooling_type", Value: *v})
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kvs, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pooling.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestPoolingOf(t *testing.T) {
	val := func(v gguf.Value) *gguf.Value { return &v }
	for _, tc := range []struct {
		name    string
		v       *gguf.Value
		want    Pooling
		wantErr bool
	}{
		{"absent", nil, PoolingMean, false},
		{"unspecified (-1)", val(gguf.Int32Value(-1)), PoolingMean, false},
		{"none", val(gguf.Uint32Value(0)), PoolingMean, false},
		{"mean", val(gguf.Uint32Value(1)), PoolingMean, false},
		{"cls", val(gguf.Uint32Value(2)), PoolingCLS, false},
		{"last", val(gguf.Int32Value(3)), PoolingLast, false},
		{"rank", val(gguf.Uint32Value(4)), 0, true},
		{"unknown", val(gguf.Uint32Value(9)), 0, true},
		{"a string", val(gguf.StringValue("mean")), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PoolingOf(poolingFile(t, tc.v))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("PoolingOf = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// BenchmarkEmbed times Embed of a 128-token input against the plain batched
// prefill of the same tokens into a fresh sequence (Forward), alternating
// the two in one loop, and reports their ratio: the cost of normalising and
// pooling every row on top of the forward pass.
func BenchmarkEmbed(b *testing.B) {
	tokens := embedTokens(128)
	for _, bm := range benchModels(b) {
		b.Run(bm.name, func(b *testing.B) {
			var embedT, prefillT time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := bm.model.Embed(context.Background(), tokens, PoolingMean); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				seq := bm.model.NewSequence(len(tokens))
				if _, err := seq.Forward(tokens); err != nil {
					b.Fatal(err)
				}
				embedT += mid.Sub(start)
				prefillT += time.Since(mid)
			}
			b.ReportMetric(float64(len(tokens)*b.N)/embedT.Seconds(), "embed-tok/s")
			b.ReportMetric(embedT.Seconds()/prefillT.Seconds(), "embed/prefill")
		})
	}
}

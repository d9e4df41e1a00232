package local

import (
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/model"
)

// testKVCache is the KV cache type of the engines openEngine opens when the
// test's options leave it at the default.
var testKVCache = model.KVDefault

// TestEachKVCacheType repeats the tests of batching, cancellation and the
// prefix cache over both cache types, whichever is the default on this
// CPU: ten concurrent greedy requests must return what each returns alone,
// a cancelled stream must free its slot and KV memory, and prefixes must be
// reused with unchanged output.
func TestEachKVCacheType(t *testing.T) {
	for _, kt := range []model.KVType{model.KVF16, model.KVQ8} {
		t.Run(kt.String(), func(t *testing.T) {
			old := testKVCache
			testKVCache = kt
			defer func() { testKVCache = old }()
			t.Run("BatchedGreedyMatchesAlone", TestBatchedGreedyMatchesAlone)
			t.Run("CancelFreesSlotAndKV", TestCancelFreesSlotAndKV)
			t.Run("PrefixCacheHit", TestPrefixCacheHit)
			t.Run("PromptPrefixReuse", TestPromptPrefixReuse)
			t.Run("GenerateGreedyMatchesReference", TestGenerateGreedyMatchesReference)
		})
	}
}

// testWeights is the type the 2-D weights of the engines openEngine opens
// are re-encoded to (quanttest.File); F32 leaves stories260K as it is.
var testWeights = gguf.F32

// TestEachWeightType repeats the batching and cancellation tests over
// stories260K re-encoded as Q8_0 and Q4_0, whose products go through the
// quantised kernels (on AVX2 and AVX-512 the packed ones, rows in groups,
// the rows past the last group through the one-row tiles) rather than the
// F32 ones: a token's result must not depend on the batch it is in there
// either.
func TestEachWeightType(t *testing.T) {
	for _, wt := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		t.Run(wt.String(), func(t *testing.T) {
			old := testWeights
			testWeights = wt
			defer func() { testWeights = old }()
			t.Run("BatchedGreedyMatchesAlone", TestBatchedGreedyMatchesAlone)
			t.Run("CancelFreesSlotAndKV", TestCancelFreesSlotAndKV)
			t.Run("PromptPrefixReuse", TestPromptPrefixReuse)
		})
	}
}

package local

import (
	"testing"

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

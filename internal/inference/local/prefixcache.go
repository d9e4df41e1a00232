package local

import (
	"slices"

	"partnerapi/internal/inference/model"
)

// prefixCache keeps the KV caches of a few finished prompts (with their
// completions), most recently used last. A chat client resends the whole
// conversation each turn and many clients share a system prompt, so a new
// prompt often starts with one of these and only its new tail needs a
// forward pass. Entries are never handed out: a request gets a copy of the
// shared prefix, so concurrent requests can share one entry. Only the
// scheduler goroutine uses it.
type prefixCache struct {
	max     int
	entries []cachedSequence
}

type cachedSequence struct {
	seq    *model.Sequence
	tokens []int
}

// take returns a copy of the longest prefix of prompt held by a cached
// entry or by one of the live sequences (whose KV entries for the tokens
// they list are final: sequences only grow) and that prefix's length, or a
// new empty sequence and 0. At least one prompt token is left to run, since
// its logits are needed. The copy holds maxCtx tokens whatever the context
// of the sequence it copies: entries outlive the requests that made them,
// and a request that ran in a smaller window (GenerateTokens takes one)
// would otherwise hand that window to the next, whose decode then failed
// with a full context, and with it every stream of that step.
func (c *prefixCache) take(net *model.Model, prompt []int, maxCtx int, live []cachedSequence) (*model.Sequence, int) {
	best, bestLen := -1, 0
	for i, e := range slices.Concat(c.entries, live) {
		if n := commonPrefix(e.tokens, prompt); n > bestLen {
			best, bestLen = i, n
		}
	}
	bestLen = min(bestLen, len(prompt)-1)
	if best < 0 || bestLen <= 0 {
		return net.NewSequence(maxCtx), 0
	}
	var seq *model.Sequence
	if best >= len(c.entries) {
		seq = live[best-len(c.entries)].seq.ClonePrefixIn(bestLen, maxCtx)
	} else {
		e := c.entries[best]
		c.entries = append(slices.Delete(c.entries, best, best+1), e)
		seq = e.seq.ClonePrefixIn(bestLen, maxCtx)
	}
	// The copy holds at most the new sequence's context window and the
	// source's filled positions, which can be fewer than the tokens
	// matched: what it holds is what was reused, and what usage reports
	// as precached_prompt_tokens.
	return seq, seq.Pos()
}

// put keeps seq, which holds tokens, evicting entries it makes redundant
// (their tokens are a prefix of these) and the least recently used beyond
// the limit; evicted KV memory is released at once.
func (c *prefixCache) put(seq *model.Sequence, tokens []int) {
	if c.max <= 0 || len(tokens) == 0 {
		seq.Release()
		return
	}
	c.entries = slices.DeleteFunc(c.entries, func(e cachedSequence) bool {
		if commonPrefix(e.tokens, tokens) == len(e.tokens) {
			e.seq.Release()
			return true
		}
		return false
	})
	c.entries = append(c.entries, cachedSequence{seq: seq, tokens: tokens})
	for len(c.entries) > c.max {
		c.entries[0].seq.Release()
		c.entries = c.entries[1:]
	}
}

// usage reports the entries and their KV memory.
func (c *prefixCache) usage() (int, int64) {
	var b int64
	for _, e := range c.entries {
		b += e.seq.KVBytes()
	}
	return len(c.entries), b
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// minSharedPrefix is the shortest prompt prefix worth waiting for: a
// joining request whose prompt shares at least this many tokens with one
// still being prefilled starts after it, and then copies those tokens' KV
// entries instead of computing them again. Shorter prefixes (a BOS token,
// a role marker) are recomputed, so unrelated prompts prefill together.
// Only the waiting request waits: the admission loop skips it, and the
// requests behind it are prefilled in the same step if the budget allows.
const minSharedPrefix = 16

// waitsForPrefix reports whether j should wait for one of the requests
// being prefilled because it will share at least minSharedPrefix tokens
// of that one's prompt that are not computed yet.
func waitsForPrefix(j *joiner, prefilling []*joiner) bool {
	for _, p := range prefilling {
		if n := commonPrefix(p.req.prompt, j.req.prompt); n >= minSharedPrefix && n > p.seq.Pos() {
			return true
		}
	}
	return false
}

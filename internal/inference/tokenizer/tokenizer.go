// Package tokenizer implements the two tokenizers GGUF models carry in their
// metadata: SentencePiece-style ("llama", merges by score with byte fallback)
// and GPT-2 byte-level BPE ("gpt2", merges by rank after a regex
// pre-tokenizer). Both follow llama.cpp's llama-vocab.cpp closely enough to
// reproduce its token ids exactly, because the engine's models were trained
// and tested with those ids.
//
// A Tokenizer is immutable after construction apart from an internal,
// mutex-guarded word cache, so one value may be shared by all requests.
//
// Callers building chat prompts should encode template text with
// parseSpecial=true but user-supplied text with parseSpecial=false, so that a
// user typing "<|end|>" cannot inject a control token. When each user text
// directly follows a special token, the concatenated ids equal those of the
// whole prompt encoded at once, because SPM applies its space prefix after
// every special token either way. Templates that print
// bos_token themselves must be encoded with addSpecial=false to avoid a
// second BOS.
package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// TokenType is the per-token type stored in tokenizer.ggml.token_type.
type TokenType int32

// Token types as numbered by GGUF (and sentencepiece).
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// Kind selects the tokenization algorithm (tokenizer.ggml.model).
type Kind int

// The supported tokenizer kinds.
const (
	KindSPM Kind = iota // "llama": SentencePiece-style merges by score
	KindBPE             // "gpt2": byte-level BPE merges by rank
)

// Vocab is everything the tokenizer needs, independent of the file format it
// came from. FromGGUF fills it from metadata; tests may build one directly.
type Vocab struct {
	Kind Kind
	// Pre names the BPE pre-tokenizer (tokenizer.ggml.pre): "gpt-2" (also the
	// fallback for absent or unknown names), "llama-bpe"/"llama3" (and
	// "smaug-bpe", "dbrx"), "qwen2", "smollm" (newBPEModel lists them all).
	Pre string
	// Name is general.name; llama.cpp keys a Phi-3 whitespace rule on it.
	Name   string
	Tokens []string
	Scores []float32   // SPM merge priorities; nil means all zero
	Types  []TokenType // nil means all normal
	Merges []string    // BPE merges "left right", rank = index

	// Special token ids; -1 when the vocabulary has none.
	BOS, EOS, UNK, EOT, EOM int

	AddBOS, AddEOS bool
	// AddSpacePrefix prepends a space to SPM text (sentencepiece's dummy
	// prefix) and strips it again when decoding.
	AddSpacePrefix bool
}

// Tokenizer encodes text to token ids and decodes ids back to text.
type Tokenizer struct {
	kind    Kind
	tokens  []string
	scores  []float32
	types   []TokenType
	rstrip  []bool // whitespace right of this special token is dropped
	toID    map[string]int32
	special []int32 // control/user-defined/unknown ids, longest text first
	eog     map[int]bool

	bos, eos, unk  int
	addBOS, addEOS bool
	addSpacePrefix bool
	pre            string     // tokenizer.ggml.pre, as given
	byteToken      [256]int32 // SPM byte-fallback ids, -1 when missing
	bpe            *bpeModel
	spmWords       bool       // SPM text may be cut into words (see encodeSPM)
	spmCache       *wordCache // SPM ids per escaped word
	pieces         [][]byte   // decoded bytes per id, as Piece returns them
	specialByText  map[string]int
}

// eogTexts are token texts llama.cpp treats as end-of-generation whatever
// their metadata says, because converters rarely record EOT ids.
var eogTexts = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
	"<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
	"<|end_of_text|>", "<end_of_utterance>", "<｜end▁of▁sentence｜>",
}

// New builds a tokenizer from a vocabulary.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, errors.New("tokenizer: empty vocabulary")
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("tokenizer: vocabulary of %d tokens is too large", n)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	t := &Tokenizer{
		kind:           v.Kind,
		tokens:         make([]string, n),
		scores:         make([]float32, n),
		types:          make([]TokenType, n),
		rstrip:         make([]bool, n),
		toID:           make(map[string]int32, n),
		eog:            map[int]bool{},
		specialByText:  map[string]int{},
		addBOS:         v.AddBOS,
		addEOS:         v.AddEOS,
		addSpacePrefix: v.AddSpacePrefix,
		pre:            v.Pre,
	}
	copy(t.scores, v.Scores)
	for i, s := range v.Tokens {
		// llama.cpp renames empty tokens so that they cannot match anything.
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		t.tokens[i] = s
		// The last duplicate wins, as in llama.cpp's token_to_id map.
		t.toID[s] = int32(i)
		t.types[i] = TypeNormal
		if v.Types != nil {
			t.types[i] = v.Types[i]
		}
	}
	valid := func(id int) int {
		if id < 0 || id >= n {
			return -1
		}
		return id
	}
	t.bos, t.eos, t.unk = valid(v.BOS), valid(v.EOS), valid(v.UNK)
	if t.addBOS && t.bos < 0 {
		t.addBOS = false
	}
	if t.addEOS && t.eos < 0 {
		t.addEOS = false
	}

	t.markEndOfGeneration(valid(v.EOT), valid(v.EOM))
	t.buildSpecialCache(v.Name)

	switch v.Kind {
	case KindSPM:
		t.buildByteTokens()
		t.spmWords = spmSplittable(t.tokens)
		t.spmCache = &wordCache{}
	case KindBPE:
		m, err := newBPEModel(t.toID, v.Merges, v.Pre)
		if err != nil {
			return nil, err
		}
		t.bpe = m
	default:
		return nil, fmt.Errorf("tokenizer: unknown kind %d", v.Kind)
	}
	t.buildPieces()
	return t, nil
}

// markEndOfGeneration collects the ids that stop generation. Tokens found by
// text are forced to the control type, as llama.cpp does, so that decoding
// never prints them.
func (t *Tokenizer) markEndOfGeneration(eot, eom int) {
	for _, s := range eogTexts {
		if id, ok := t.toID[s]; ok {
			t.eog[int(id)] = true
			t.types[id] = TypeControl
		}
	}
	for _, id := range []int{t.eos, eot, eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
}

// buildSpecialCache lists the tokens that tokenizer_st_partition matches in
// raw text: control, user-defined and unknown tokens, longest text first so
// that "<|end|>" never shadows a longer token sharing its prefix.
func (t *Tokenizer) buildSpecialCache(modelName string) {
	for id, ty := range t.types {
		if ty == TypeControl || ty == TypeUserDefined || ty == TypeUnknown {
			t.special = append(t.special, int32(id))
			t.specialByText[t.tokens[id]] = id
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(t.tokens[t.special[a]]) > len(t.tokens[t.special[b]])
	})
	// Phi-3 was trained with whitespace after its chat markers removed, and
	// the GGUF does not record that, so llama.cpp keys the rule on the model
	// name; we must do the same to produce the same prompt ids.
	name := strings.ToLower(modelName)
	if strings.Contains(name, "phi-3") || strings.Contains(name, "phi3") {
		for _, id := range t.special {
			t.rstrip[id] = true
		}
		if id, ok := t.toID["</s>"]; ok {
			t.rstrip[id] = true
		}
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			if id, ok := t.toID[s]; ok {
				t.rstrip[id] = false
			}
		}
	}
}

// buildByteTokens resolves SPM byte fallback: "<0xNN>" tokens, else the byte
// itself as a one-character token, else unknown.
func (t *Tokenizer) buildByteTokens() {
	const hex = "0123456789ABCDEF"
	for b := 0; b < 256; b++ {
		t.byteToken[b] = -1
		// Indexing with the conversion itself lets the compiler look the
		// name up without allocating a string for it (staticcheck SA6001).
		name := [...]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'}
		if id, ok := t.toID[string(name[:])]; ok {
			t.byteToken[b] = id
		} else if id, ok := t.toID[string([]byte{byte(b)})]; ok {
			t.byteToken[b] = id
		} else if t.unk >= 0 {
			t.byteToken[b] = int32(t.unk)
		}
	}
}

// VocabSize is the number of tokens in the vocabulary.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS is the beginning-of-sequence id, or -1.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS is the end-of-sequence id, or -1.
func (t *Tokenizer) EOS() int { return t.eos }

// UnknownPreTokenizer returns the vocabulary's tokenizer.ggml.pre when it
// names no pre-tokenizer this package knows (ok true): its text is split
// with the GPT-2 pattern, which may give other ids than the model was
// trained on, so loading it is worth a warning.
func (t *Tokenizer) UnknownPreTokenizer() (pre string, ok bool) {
	if t.bpe == nil || !t.bpe.unknownPre {
		return "", false
	}
	return t.pre, true
}

// AddsBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS }

// IsEOG reports whether generating id ends the turn (EOS, EOT, <|end|>,
// <|im_end|>, <|endoftext|> and similar).
func (t *Tokenizer) IsEOG(id int) bool { return t.eog[id] }

// Special returns the id of a control, user-defined or unknown token by its
// exact text, e.g. "<|user|>".
func (t *Tokenizer) Special(text string) (int, bool) {
	id, ok := t.specialByText[text]
	return id, ok
}

// ControlTexts lists the texts Encode turns into tokens only when it parses
// special tokens (control and unknown tokens, as partition skips them
// otherwise), longest first: the spellings request text must not reach
// that parsing with.
func (t *Tokenizer) ControlTexts() []string {
	var out []string
	for _, id := range t.special {
		if ty := t.types[id]; ty == TypeControl || ty == TypeUnknown {
			out = append(out, t.tokens[id])
		}
	}
	return out
}

// TokenText returns the vocabulary string of id ("" when out of range), e.g.
// "<s>" for templates that print bos_token.
func (t *Tokenizer) TokenText(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenType returns the type of id (TypeUndefined when out of range).
func (t *Tokenizer) TokenType(id int) TokenType {
	if id < 0 || id >= len(t.types) {
		return TypeUndefined
	}
	return t.types[id]
}

// Encode converts text to token ids. addSpecial adds BOS and EOS as the
// vocabulary's add_bos/add_eos flags ask; parseSpecial lets control tokens
// written in the text (e.g. "<|user|>") become their ids. User-defined tokens
// are always matched whole, as in llama.cpp.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int {
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	return t.encodeFragments(frags, len(text), addSpecial)
}

// Segment is a run of text to encode with its own special-token rule.
type Segment struct {
	Text         string
	ParseSpecial bool // control tokens written in Text become their ids
}

// EncodeSegments encodes the concatenation of segs, parsing control-token
// text only in the segments that ask for it: a chat prompt's template text
// does, the messages' contents (user input) do not. Text on both sides of a
// segment boundary is encoded as one run, so the ids are those Encode gives
// the whole text wherever no control-token text sits in a segment that
// must not parse it.
func (t *Tokenizer) EncodeSegments(segs []Segment, addSpecial bool) []int {
	var frags []fragment
	n := 0
	for _, s := range segs {
		if s.Text == "" {
			continue
		}
		n += len(s.Text)
		for _, f := range t.partition(s.Text, s.ParseSpecial) {
			if last := len(frags) - 1; f.token < 0 && last >= 0 && frags[last].token < 0 {
				frags[last].text += f.text
				continue
			}
			frags = append(frags, f)
		}
	}
	return t.encodeFragments(frags, n, addSpecial)
}

// encodeFragments encodes partitioned text of n bytes, adding BOS and EOS
// as the vocabulary asks when addSpecial is set.
func (t *Tokenizer) encodeFragments(frags []fragment, n int, addSpecial bool) []int {
	out := make([]int, 0, n/3+2)
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	switch t.kind {
	case KindSPM:
		// The dummy prefix goes in front of the text and of every text run
		// that follows a special token, as sentencepiece sees each such run
		// as a fresh sentence.
		prevSpecial := true
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, int(f.token))
				prevSpecial = true
				continue
			}
			out = t.encodeSPM(f.text, t.addSpacePrefix && prevSpecial, out)
			prevSpecial = false
		}
	case KindBPE:
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, int(f.token))
				continue
			}
			out = t.encodeBPE(f.text, out)
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out
}

// wordCache memoises BPE results per pre-tokenized word; natural text repeats
// words so often that this removes most merge work.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int32
}

const wordCacheLimit = 1 << 16

func (c *wordCache) get(k string) ([]int32, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	return v, ok
}

func (c *wordCache) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

func (c *wordCache) put(k string, v []int32) {
	c.mu.Lock()
	// Dropping everything when full is crude but keeps memory bounded
	// without bookkeeping on every hit.
	if c.m == nil || len(c.m) >= wordCacheLimit {
		c.m = make(map[string][]int32, 1024)
	}
	c.m[strings.Clone(k)] = v
	c.mu.Unlock()
}

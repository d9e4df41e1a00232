# Generates pretokenize.json: random strings over an alphabet of characters
# that exercise every branch of the pre-tokenizer patterns, split by the
# reference regular expressions with Python's `regex` module (which has \p{..}
# classes and look-ahead). Run from the package directory:
#   python3 testdata/pretokenize_gen.py
import random, json, regex
random.seed(7)
alpha = [' ', ' ', ' ', '\t', '\n', '\r', 'a', 'b', 'Z', 'é', 'я', '中', '1', '2', '²', '٣', "'", "'", 's', 't', 'l', 'L', 'S', 'r', 'e', 'v', 'D', 'm', '!', '.', '🚀', '\u00a0', '\u3000', '\u0301', '\u200d', '_', '-', '\u2028', '\u0085', '\x0b', '\x0c']
ins = []
for i in range(400):
    n = random.randint(0, 14)
    ins.append(''.join(random.choice(alpha) for _ in range(n)))
pats = {
 'gpt2': r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
 'llama3': r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
 'qwen2': r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}
out = {'inputs': ins}
for k, p in pats.items():
    r = regex.compile(p)
    res = []
    for s in ins:
        words = r.findall(s)
        assert ''.join(words) == s, (k, s, words)
        res.append(words)
    out[k] = res
# smollm: \p{N} split first, then gpt2 regex (without trailing \s+ as in llama.cpp) per region
d = regex.compile(r"\p{N}")
g = regex.compile(pats['gpt2'])
res = []
for s in ins:
    words = []
    pos = 0
    for m in d.finditer(s):
        if m.start() > pos: words += g.findall(s[pos:m.start()])
        words.append(m.group()); pos = m.end()
    if pos < len(s): words += g.findall(s[pos:])
    res.append(words)
out['smollm'] = res
json.dump(out, open('testdata/pretokenize.json', 'w'), ensure_ascii=False, indent=0)

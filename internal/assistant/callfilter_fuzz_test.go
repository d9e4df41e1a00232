package assistant

import (
	"strings"
	"testing"

	"partnerapi/internal/inference/chattemplate"
)

// FuzzCallFilter holds the streamed split of a reply at its tool call to
// the whole reply: however the engine cuts the text into pieces, what the
// filter sends is what it sends for the text in one piece, what it sends
// and holds together are the text, and nothing from <tool_call> on (or of
// a reply that opens with "{") is sent while it streams.
func FuzzCallFilter(f *testing.F) {
	for _, s := range []string{
		"Hello", "  {\"name\":\"f\"}", "Sure. <tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>", "a <tool_", "<tool_call",
		"<<tool_call>>", "\n\t", "x<tool_call>y<tool_call>", "<tool_callx>",
	} {
		f.Add(s, []byte{1, 2, 3})
		f.Add(s, []byte{})
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		var whole callFilter
		wantSent := whole.push(text)
		var chunked callFilter
		var sent strings.Builder
		rest := text
		for i := 0; rest != ""; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				c := cuts[i%len(cuts)]
				n = min(n, 1+int(c%16))
				if c >= 128 {
					sent.WriteString(chunked.push("")) // an empty piece, as a stream may send
				}
			}
			sent.WriteString(chunked.push(rest[:n]))
			rest = rest[n:]
		}
		if sent.String() != wantSent {
			t.Fatalf("%q in pieces sent %q, in one %q", text, sent.String(), wantSent)
		}
		if sent.String()+chunked.rest() != text {
			t.Fatalf("%q: sent %q and held %q", text, sent.String(), chunked.rest())
		}
		trimmed := strings.TrimLeft(text, " \t\r\n")
		if i := strings.Index(text, chattemplate.ToolCallOpen); (i >= 0 && len(wantSent) > i) || (strings.HasPrefix(trimmed, "{") && wantSent != "") {
			t.Fatalf("%q: sent %q of a call", text, wantSent)
		}
	})
}

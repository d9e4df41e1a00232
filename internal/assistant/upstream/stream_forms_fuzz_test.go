package upstream

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"partnerapi/internal/assistant"
)

// FuzzReadStreamForms holds the SSE reader to what the event-stream
// format leaves free: lines may end in LF or CRLF (WHATWG HTML §9.2.6),
// and the body may arrive in reads of any size. The same stream in each
// of these forms gives the same answer, deltas and verdict: a transport
// that sends CRLF, or a proxy that passes the body on a byte at a time,
// must not change what the client hears.
func FuzzReadStreamForms(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), uint8(1))
	f.Add([]byte(": ping\nevent: x\ndata:{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"finish_reason\":\"length\"},{\"index\":1,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n"), uint8(2))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\ndata: {\"choi"), uint8(1))
	f.Add([]byte("data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n"), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		choices := int(n%3) + 1
		read := func(b []byte, oneByte bool) string {
			var deltas strings.Builder
			r := bytes.NewReader(b)
			var out streamed
			var err error
			emit := func(d assistant.Delta) error { fmt.Fprintf(&deltas, "%d:%q ", d.Index, d.Text); return nil }
			if oneByte {
				out, err = readStream(context.Background(), iotest.OneByteReader(r), choices, emit)
			} else {
				out, err = readStream(context.Background(), r, choices, emit)
			}
			return describeStreamed(out, err) + " deltas=" + deltas.String()
		}
		whole := read(body, false)
		if got := read(body, true); got != whole {
			t.Fatalf("body %q read a byte at a time:\n%s\nwhole:\n%s", body, got, whole)
		}
		crlf := bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
		if bytes.Contains(body, []byte("\r")) || reflect.DeepEqual(crlf, body) {
			return
		}
		if got := read(crlf, false); got != whole {
			t.Fatalf("body %q with CRLF line ends:\n%s\nwith LF:\n%s", body, got, whole)
		}
	})
}

// describeStreamed writes what a read answered, pointers followed.
func describeStreamed(out streamed, err error) string {
	var b strings.Builder
	for _, ch := range out.choices {
		fmt.Fprintf(&b, "[%d %q %q", ch.Index, ch.Text, ch.FinishReason)
		if fc := ch.FunctionCall; fc != nil {
			fmt.Fprintf(&b, " call %q %s", fc.Name, fc.Arguments)
		}
		b.WriteString("] ")
	}
	if out.usage != nil {
		fmt.Fprintf(&b, "usage %+v ", *out.usage)
	}
	fmt.Fprintf(&b, "cut %v calls %q err %v", out.cut, out.calls, err)
	return b.String()
}

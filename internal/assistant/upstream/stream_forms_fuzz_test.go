package upstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"partnerapi/internal/assistant"
)

// FuzzReadStreamForms holds the SSE reader to what the event-stream
// format leaves free: lines may end in LF, CRLF or a bare CR (WHATWG HTML
// §9.2.6), mixed, and the body may arrive in reads of any size, a CRLF
// split between two. The same stream in each of these forms gives the
// same answer, deltas and verdict: a transport that sends CRLF or CR, or a
// proxy that passes the body on a byte at a time, must not change what
// the client hears.
func FuzzReadStreamForms(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), uint8(1))
	f.Add([]byte(": ping\nevent: x\ndata:{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"finish_reason\":\"length\"},{\"index\":1,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n"), uint8(2))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\ndata: {\"choi"), uint8(1))
	f.Add([]byte("data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n"), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		choices := int(n%3) + 1
		read := func(b []byte, how int) string {
			var deltas strings.Builder
			var r io.Reader = bytes.NewReader(b)
			switch how {
			case 1:
				r = iotest.OneByteReader(r)
			case 2:
				r = &splitReader{b: b}
			}
			emit := func(d assistant.Delta) error { fmt.Fprintf(&deltas, "%d:%q ", d.Index, d.Text); return nil }
			out, err := readStream(context.Background(), r, choices, emit)
			return describeStreamed(out, err) + " deltas=" + deltas.String()
		}
		whole := read(body, 0)
		for how, name := range []string{"", "a byte at a time", "in reads ending at each CR"} {
			if got := read(body, how); how > 0 && got != whole {
				t.Fatalf("body %q read %s:\n%s\nwhole:\n%s", body, name, got, whole)
			}
		}
		if bytes.Contains(body, []byte("\r")) || !bytes.Contains(body, []byte("\n")) {
			return
		}
		// The same lines with other line ends: all CRLF, all CR, and
		// each line end chosen by n's bits in turn.
		mixed := make([]byte, 0, 2*len(body))
		k := 0
		for _, c := range body {
			if c != '\n' {
				mixed = append(mixed, c)
				continue
			}
			end := [][]byte{[]byte("\n"), []byte("\r\n"), []byte("\r")}[(int(n)>>(k%4))%3]
			if end[0] == '\n' && len(mixed) > 0 && mixed[len(mixed)-1] == '\r' {
				// A CR end and then an LF end would be one CRLF.
				end = []byte("\r\n")
			}
			mixed = append(mixed, end...)
			k++
		}
		for name, b := range map[string][]byte{
			"CRLF":  bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n")),
			"CR":    bytes.ReplaceAll(body, []byte("\n"), []byte("\r")),
			"mixed": mixed,
		} {
			for how, way := range []string{"whole", "a byte at a time", "in reads ending at each CR"} {
				if got := read(b, how); got != whole {
					t.Fatalf("body %q with %s line ends (%q) read %s:\n%s\nwith LF:\n%s", body, name, b, way, got, whole)
				}
			}
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

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

// TestReadStreamLineEnds holds the SSE reader to the event-stream
// format's line ends (WHATWG HTML §9.2.6): CRLF, LF or a bare CR, mixed
// freely, and a CRLF split between two reads is one line end, not two. A
// stream in each form answers what its LF form answers.
func TestReadStreamLineEnds(t *testing.T) {
	lf := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		": ping\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
		"data: [DONE]\n\n"
	read := func(r io.Reader) string {
		var deltas strings.Builder
		emit := func(d assistant.Delta) error { fmt.Fprintf(&deltas, "%d:%q ", d.Index, d.Text); return nil }
		out, err := readStream(context.Background(), r, 1, emit)
		return describeStreamed(out, err) + " deltas=" + deltas.String()
	}
	want := read(strings.NewReader(lf))
	if !strings.Contains(want, `"Hi there" "stop"`) || !strings.Contains(want, "err <nil>") {
		t.Fatalf("LF stream: %s", want)
	}
	cr := strings.ReplaceAll(lf, "\n", "\r")
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	mixed := strings.Replace(strings.Replace(lf, "\n", "\r", 2), "\n\n", "\r\n\r", 1)
	for name, body := range map[string]string{"CR": cr, "CRLF": crlf, "mixed": mixed, "CR without the last": strings.TrimSuffix(cr, "\r")} {
		for how, r := range map[string]io.Reader{
			"whole":       strings.NewReader(body),
			"byte a time": iotest.OneByteReader(strings.NewReader(body)),
			// Each read ends on a CR whose LF opens the next one.
			"split CRLF": &splitReader{b: []byte(body)},
		} {
			if got := read(r); got != want {
				t.Errorf("%s, %s:\n%s\nwant\n%s", name, how, got, want)
			}
		}
	}
}

// splitReader answers each read up to and including the next CR, so a
// CRLF is always split between two reads.
type splitReader struct{ b []byte }

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := len(s.b)
	if i := bytes.IndexByte(s.b, '\r'); i >= 0 {
		n = i + 1
	}
	n = copy(p, s.b[:n])
	s.b = s.b[n:]
	return n, nil
}

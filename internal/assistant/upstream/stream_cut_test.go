package upstream

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadStreamCutMidChunk: a stream that ends inside a chunk, cleanly or
// with a read error (a connection broken mid-write), is a stream cut
// short, the server's fault that a pool fails over on before the first
// delta; only a malformed line the stream goes on after is a bad chunk.
// Before, both cut streams were "bad chunk" errors, which no pool fails
// over on.
func TestReadStreamCutMidChunk(t *testing.T) {
	const first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	for _, tc := range []struct {
		name      string
		body      io.Reader
		wantFault bool
		want      string
	}{
		{"ends mid-chunk", strings.NewReader(first + `data: {"choices":[{"ind`), true, "without [DONE]"},
		{"breaks mid-chunk", io.MultiReader(strings.NewReader(first+`data: {"choi`), iotest.ErrReader(io.ErrUnexpectedEOF)), true, "unexpected EOF"},
		{"ends after a whole chunk", strings.NewReader(first), true, "without [DONE]"},
		// Finished, but the usage chunk after the finish was cut: a stream
		// cut short, not LocalAI's stream without [DONE]
		// (TestStreamWithoutDoneOnceFinished).
		{"finished, then ends mid-chunk", strings.NewReader(first + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" + `data: {"usage":{"pro`), true, "without [DONE]"},
		{"bad chunk the stream goes on after", strings.NewReader(first + "data: {nope\n\ndata: [DONE]\n\n"), false, "bad chunk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readStream(context.Background(), tc.body, 1, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			var f *serverFault
			if got := errors.As(err, &f) && f.reason == ReasonStream; got != tc.wantFault {
				t.Fatalf("a stream fault (fails over): %v, want %v (err %v)", got, tc.wantFault, err)
			}
		})
	}
}

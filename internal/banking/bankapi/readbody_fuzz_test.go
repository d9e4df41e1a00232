package bankapi

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unicode/utf8"
)

// chunkReader hands out data in the sizes of sizes, in turn (a 0 is a
// read of nothing, which io.Reader allows), and returns io.EOF with the
// last bytes when eofWithData is set, as some readers do.
type chunkReader struct {
	data        []byte
	sizes       []byte
	i           int
	eofWithData bool
	err         error // returned instead of io.EOF at the end
	zero        bool  // the last read was of nothing
}

func (c *chunkReader) Read(p []byte) (int, error) {
	end := c.err
	if end == nil {
		end = io.EOF
	}
	if len(c.data) == 0 {
		return 0, end
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = min(n, int(c.sizes[c.i%len(c.sizes)]))
		c.i++
		if n == 0 && c.zero {
			n = 1 // a read of nothing once, not forever
		}
	}
	c.zero = n == 0
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	if len(c.data) == 0 && c.eofWithData {
		return n, end
	}
	return n, nil
}

// FuzzReadBody holds the pooled body reader every payment operation uses
// to io.ReadAll: the same bytes however the body arrives in pieces, the
// reader's error passed on with what came before it, a whole body that is
// not UTF-8 refused (with its bytes still read), and a pooled buffer
// that, once released and taken by the next body, neither shows that body
// the previous one's bytes nor changes a copy taken before the release.
func FuzzReadBody(f *testing.F) {
	f.Add([]byte(`{"amount":"1.00"}`), uint16(1), []byte{1, 0, 3}, false, false)
	f.Add([]byte("x"), uint16(5000), []byte{255}, true, false)
	f.Add([]byte{}, uint16(0), []byte{}, false, true)
	f.Add([]byte("ab"), uint16(40000), []byte{}, true, true)
	f.Fuzz(func(t *testing.T, pattern []byte, repeat uint16, sizes []byte, eofWithData, fail bool) {
		// The body is a short pattern repeated, so that bodies past the
		// pool's 64 KiB bound come from inputs of a few bytes: the
		// fuzzer's minimizer spends minutes on a long input whose
		// coverage depends on its length, and the worker fuzzes nothing
		// meanwhile.
		if len(pattern) > 64 || len(sizes) > 64 {
			return
		}
		body := bytes.Repeat(pattern, int(repeat))
		var readErr error
		if fail {
			readErr = errors.New("connection reset")
		}
		read := func(data []byte) (*[]byte, error) {
			return readBody(&chunkReader{data: data, sizes: sizes, eofWithData: eofWithData, err: readErr})
		}
		bp, err := read(body)
		if !bytes.Equal(*bp, body) {
			t.Fatalf("readBody gave %d bytes, %v; want the %d bytes sent", len(*bp), err, len(body))
		}
		switch {
		case readErr != nil && err != readErr:
			t.Fatalf("readBody's error %v, want the reader's %v", err, readErr)
		case readErr == nil && utf8.Valid(body) && err != nil:
			t.Fatalf("readBody refused a UTF-8 body of %d bytes: %v", len(body), err)
		case readErr == nil && !utf8.Valid(body) && err == nil:
			t.Fatalf("readBody took a body of %d bytes that is not UTF-8", len(body))
		}
		kept := bytes.Clone(*bp)
		releaseBody(bp)
		other := bytes.Repeat([]byte{'#'}, len(body)/2)
		bp2, err := read(other)
		if err != readErr || !bytes.Equal(*bp2, other) {
			t.Fatalf("the next body read as %d bytes, %v; want %d", len(*bp2), err, len(other))
		}
		releaseBody(bp2)
		if !bytes.Equal(kept, body) {
			t.Fatal("a copy of the first body changed")
		}
	})
}

package testenv

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// RawExchange sends req on a fresh connection from dial, byte for byte as
// written, and reads the answer up to the server's close: the tests of
// requests net/http refuses before any handler need to send what no
// http.Client would. The request is written while the answer is read,
// since the server answers an oversized head before the client has sent
// all of it.
func RawExchange(tb testing.TB, dial func() (net.Conn, error), req string) (*http.Response, []byte) {
	tb.Helper()
	c, err := dial()
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = io.WriteString(c, req) }()
	raw, err := io.ReadAll(c)
	if len(raw) == 0 {
		tb.Fatalf("no answer: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		tb.Fatalf("answer %q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("answer %q: %v", raw, err)
	}
	return resp, body
}

package chatapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// A body that is not UTF-8 is a 400, not a chat over U+FFFD; a body that
// cannot be read (a chunk size that is no number) is a 400 too, where it
// was answered as too large; both in the API's {status, message}.
func TestBodiesNotUTF8OrUnreadable(t *testing.T) {
	f := newFixture(t)
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	for _, path := range []string{"/api/v1/chat/completions", "/api/v1/tokens/count"} {
		body := `{"model":"plain","input":["a` + "\xff" + `b"],"messages":[{"role":"user","content":"a` + "\xff" + `b"}]}`
		resp, raw := f.call("POST", path, tok, body)
		var e errorBody
		if resp.StatusCode != 400 || json.Unmarshal(raw, &e) != nil || e.Status != 400 || e.Message != "invalid JSON body: not UTF-8" {
			t.Errorf("%s, not UTF-8: %d %s", path, resp.StatusCode, raw)
		}
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", tok)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var e errorBody
	if resp.StatusCode != 400 || json.Unmarshal(raw, &e) != nil || e.Message != "could not read the body" {
		t.Errorf("broken chunked body: %d %s", resp.StatusCode, raw)
	}
}

package web

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MalformedRequest is the error the platform hands an API's ErrorWriter for
// a request net/http refused before any handler ran: headers over
// MaxHeaderBytes (431), a missing or malformed Host, an invalid header name
// or value, a request line or framing it cannot read (400), a
// Transfer-Encoding it does not know (501), an HTTP version other than 1.x
// (505), plain HTTP sent to an HTTPS listener (400), an Expect other than
// 100-continue (417). The status is the one net/http chose; the request
// handed along with it is made up, since none reaches the platform: no
// method, no path, no headers, and a fresh request id of the platform's.
type MalformedRequest struct {
	// Reason is net/http's own words for what was wrong ("malformed Host
	// header", "unsupported transfer encoding"), or ours in their style
	// for a 417, which net/http answers without words ("unsupported
	// Expect header"): fixed texts that carry nothing of the request;
	// empty for a generic 400 and a 431.
	Reason string
}

func (e *MalformedRequest) Error() string {
	if e.Reason == "" {
		return "malformed request"
	}
	return "malformed request: " + e.Reason
}

// net/http writes its refusals straight onto the connection, each in one
// write, before any handler runs (net/http/server.go, conn.serve): for the
// errors of readRequest
//
//	"HTTP/1.1 " + code + " " + text + refusalHeaders + body
//
// where body is the status line's tail again ("431 Request Header Fields
// Too Large", "400 Bad Request: malformed Host header") or, for a 501,
// "Unsupported transfer encoding"; and for a TLS listener's first bytes
// that are plain HTTP, httpsRefusal onto the TCP connection under TLS.
//
// An Expect other than 100-continue is refused after the request was read,
// still before any handler (conn.serve, sendExpectationFailed): net/http
// sets Connection: close on the response's own header, writes the 417 and
// finishes the response, which flushes its head alone, in one write, in
// the request's protocol:
//
//	"HTTP/1.x 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\nContent-Length: 0\r\n\r\n"
//
// without the Content-Length line for a HEAD request.
const (
	refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	httpsRefusal   = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
	teRefusalBody  = "Unsupported transfer encoding"
	// expectRefusalHead follows "HTTP/1.0" or "HTTP/1.1" in a 417, and
	// expectRefusalTail follows its Date unless the request was a HEAD.
	expectRefusalHead = " 417 Expectation Failed\r\nConnection: close\r\nDate: "
	expectRefusalTail = "\r\nContent-Length: 0\r\n\r\n"
	httpDateLen       = len("Mon, 02 Jan 2006 15:04:05 GMT")
	// maxRefusal bounds the writes worth looking into: net/http's longest
	// refusal (a 505 with its reason, twice, and the headers) is under 200
	// bytes, and a write longer than this is passed on after one compare.
	maxRefusal = 320
)

// refusal is what parseRefusal reads from one of net/http's refusals.
type refusal struct {
	status int
	proto  string // HTTP/1.1, or HTTP/1.0 as net/http answered
	reason string
	// headOnly: the refused request was a HEAD (a 417's), whose answer
	// has no body.
	headOnly bool
}

// parseRefusal reports whether p is one of net/http's pre-handler refusals,
// and which.
//
// No response of a handler matches. net/http writes a handler's head as its
// status line, the handler's headers sorted, then Date (unless the handler
// set it to nil), Content-Length, Content-Type, Connection and
// Transfer-Encoding in that fixed order (extraHeader.Write), so a handler's
// head can have "Content-Type: text/plain; charset=utf-8" (sniffed) right
// before "Connection: close" (closeAfterReply). To match, the status line
// must be followed by Content-Type at once, which leaves no room for the
// X-Request-Id the platform sets on every answer, nor for the Date
// net/http adds to every answer whose handler did not remove it; a
// Connection: close the handler set itself is a handler header, written
// sorted before Content-Type; and the body must be the status line's own
// tail again, in the same write, with neither Content-Length nor chunking.
// Only a handler that deliberately deleted X-Request-Id and Date, set
// Transfer-Encoding to identity and wrote its own status line as its body
// could forge one, and no handler of ours does
// (TestRefusalLeavesHandlerAnswers). A 417's head is net/http's header
// alone, Connection: close, then Date; a handler's 417 with Connection:
// close has the platform's X-Request-Id between them.
func parseRefusal(p []byte) (refusal, bool) {
	if !mayBeRefusal(p) || string(p[:7]) != "HTTP/1." {
		return refusal{}, false
	}
	if string(p) == httpsRefusal {
		return refusal{http.StatusBadRequest, "HTTP/1.0", "client sent an HTTP request to an HTTPS server", false}, true
	}
	if string(p[8:12]) == " 417" {
		return parseExpectRefusal(p)
	}
	if len(p) < len("HTTP/1.1 400 ")+len(refusalHeaders) || p[7] != '1' || p[8] != ' ' {
		return refusal{}, false
	}
	eol := bytes.IndexByte(p, '\r')
	if eol < 0 || len(p)-eol < len(refusalHeaders) || p[eol+2] != 'C' || string(p[eol:eol+len(refusalHeaders)]) != refusalHeaders {
		return refusal{}, false
	}
	line, body := p[len("HTTP/1.1 "):eol], p[eol+len(refusalHeaders):]
	if len(line) < 5 || line[3] != ' ' {
		return refusal{}, false
	}
	code, err := strconv.Atoi(string(line[:3]))
	if err != nil || code < 400 || code > 599 {
		return refusal{}, false
	}
	var reason string
	text, st := string(line[4:]), http.StatusText(code)
	switch {
	case text == st && string(body) == string(line):
	case len(text) > len(st)+2 && text[:len(st)+2] == st+": " && string(body) == string(line):
		reason = text[len(st)+2:]
	case code == http.StatusNotImplemented && text == st && string(body) == teRefusalBody:
		reason = "unsupported transfer encoding"
	default:
		return refusal{}, false
	}
	return refusal{code, "HTTP/1.1", reason, false}, true
}

// parseExpectRefusal is parseRefusal for a 417, p starting "HTTP/1.".
func parseExpectRefusal(p []byte) (refusal, bool) {
	proto := "HTTP/1.1"
	switch p[7] {
	case '1':
	case '0':
		proto = "HTTP/1.0"
	default:
		return refusal{}, false
	}
	rest := p[len("HTTP/1.1"):]
	if len(rest) < len(expectRefusalHead)+httpDateLen || string(rest[:len(expectRefusalHead)]) != expectRefusalHead {
		return refusal{}, false
	}
	date, tail := rest[len(expectRefusalHead):len(expectRefusalHead)+httpDateLen], rest[len(expectRefusalHead)+httpDateLen:]
	if string(date[httpDateLen-len(" GMT"):]) != " GMT" {
		return refusal{}, false
	}
	var headOnly bool
	switch string(tail) {
	case expectRefusalTail:
	case "\r\n\r\n":
		headOnly = true
	default:
		return refusal{}, false
	}
	return refusal{http.StatusExpectationFailed, proto, "unsupported Expect header", headOnly}, true
}

// mayBeRefusal is the compares that turn nearly every write of a
// handler's answer away, cheap enough to sit in front of each write:
// writes longer than maxRefusal (a head and its body together, or a 4 KiB
// flush) and shorter than any refusal are not looked into, nor are those
// whose tenth byte is not a 4 or a 5 (every successful head, most body
// bytes, TLS records). The rest is parseRefusal's; among heads, it sees
// only errors' heads, whose status line is followed by a header other than
// Content-Type.
func mayBeRefusal(p []byte) bool {
	return len(p) <= maxRefusal && len(p) >= len(httpsRefusal) && (p[9] == '4' || p[9] == '5')
}

// refuser answers net/http's pre-handler refusals on one listener in its
// API's envelope.
type refuser struct {
	api  string
	errs ErrorWriter
	log  *slog.Logger
	// refused counts the answers by API and status; nil without metrics.
	refused *prometheus.CounterVec
}

// answer is the envelope's whole answer to a refusal: the status net/http
// chose, the headers the API's ErrorWriter set, Content-Length, Date and
// Connection: close (net/http closes the connection after its refusal), and
// the body, unless the refused request was a HEAD. Like every answer of the platform it carries X-Request-Id, a
// fresh id the ErrorWriter takes as the platform's own (the banking
// referenceId), and the log line that says so is how that id is found.
func (rf *refuser) answer(rr refusal, remote net.Addr) []byte {
	status, proto, reason := rr.status, rr.proto, rr.reason
	id := NewUUID()
	ctx := &idContext{Context: context.Background(), id: id, made: true, start: time.Now()}
	req := (&http.Request{Method: "", URL: &url.URL{}, Proto: proto, Header: http.Header{}}).WithContext(ctx)
	w := &refusalWriter{h: http.Header{"X-Request-Id": {id}}}
	rf.errs(w, req, status, &MalformedRequest{Reason: reason})
	if w.status == 0 {
		w.status = status
	}
	var remoteAddr string
	if remote != nil {
		remoteAddr = remote.String()
	}
	rf.log.Info("request refused before routing", "api", rf.api, "status", w.status, "reason", reason,
		"request_id", id, "remote", remoteAddr)
	if rf.refused != nil {
		rf.refused.WithLabelValues(rf.api, strconv.Itoa(w.status)).Inc()
	}
	h := w.h
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection"} {
		delete(h, k)
	}
	h["Content-Length"] = []string{strconv.Itoa(w.body.Len())}
	h["Connection"] = []string{"close"}
	h["Date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	var out bytes.Buffer
	out.WriteString(proto + " " + strconv.Itoa(w.status) + " " + http.StatusText(w.status) + "\r\n")
	_ = h.Write(&out) // sorted by key
	out.WriteString("\r\n")
	if !rr.headOnly {
		out.Write(w.body.Bytes())
	}
	return out.Bytes()
}

// refusalWriter gathers what an ErrorWriter writes for a refusal.
type refusalWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *refusalWriter) Header() http.Header { return w.h }

func (w *refusalWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// refusingListener hands out connections whose writes of net/http's
// refusals are answered in the API's envelope instead.
type refusingListener struct {
	net.Listener
	rf *refuser
}

func (l refusingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &refusingConn{Conn: c, rf: l.rf}, nil
}

// refusingConn is a TCP connection of a listener whose refusals are
// answered in its API's envelope. Under TLS it is the connection beneath
// the *tls.Conn the server reads requests from, so it sees net/http's
// refusal of plain HTTP on an HTTPS port, and ciphertext otherwise: the
// refusals net/http writes into a TLS connection keep its plain text,
// since the server needs the *tls.Conn itself (it type-asserts it for the
// handshake, the client certificate and ALPN) and a *tls.Conn's plaintext
// writes have no hook.
type refusingConn struct {
	net.Conn
	rf *refuser
}

// Write passes p on unless it is one of net/http's refusals, which it
// replaces by the envelope's answer. It reports p as written either way:
// net/http looks at no count of its refusals' writes.
func (c *refusingConn) Write(p []byte) (int, error) {
	if !mayBeRefusal(p) {
		return c.Conn.Write(p)
	}
	rr, ok := parseRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(c.rf.answer(rr, c.Conn.RemoteAddr())); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite keeps the TCP half-close net/http sends after a 431 (so that
// the client reads the answer before the connection resets) working
// through the wrapper.
func (c *refusingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

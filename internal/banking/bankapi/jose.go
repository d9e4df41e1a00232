package bankapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// joseContentType is the media type of a compact JWS (RFC 7515 9.2.1).
const joseContentType = "application/jose"

// Server is the banking API's router with the one transport rule that
// spans every route: a client whose Accept asks for application/jose gets
// each JSON answer of the API as a compact JWS signed with the bank's key
// (reference §1, §9.6). Handlers stay unaware of it and keep writing JSON.
type Server struct {
	*web.Mux
	jws *banking.BankKey
	log *slog.Logger // where the platform's answers log their referenceId
}

// ServeHTTP signs the answer when the client asked for JWS and passes
// everything else to the router untouched. The check for the common case
// is one header map look-up and a substring test, so JSON clients pay
// neither an allocation nor a parse.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.wantsJose(r) {
		s.Mux.ServeHTTP(w, r)
		return
	}
	jw := &joseWriter{ResponseWriter: w, header: http.Header{}}
	s.Mux.ServeHTTP(jw, r)
	jw.finish(s.jws)
}

// wantsJose reports whether r's answer is to be a JWS: the server has a
// key, the path is under the API and the client prefers application/jose.
func (s *Server) wantsJose(r *http.Request) bool {
	return s.jws != nil && mentionsJose(r.Header["Accept"]) && strings.HasPrefix(r.URL.Path, apiPrefix+"/") && prefersJose(r.Header["Accept"])
}

// ErrorWriter is the banking envelope for the platform under the JWS rule
// of ServeHTTP. The platform writes two answers itself, outside the
// router: the 413 of a body declared over the limit (before the router
// runs) and the 500 of a recovered panic (after ServeHTTP has unwound,
// its joseWriter unfinished). Through this writer both are signed like
// every other answer to a client that asked for application/jose, so such
// a client never gets plain JSON it did not ask for; the platform stays
// unaware of JWS.
func (s *Server) ErrorWriter() web.ErrorWriter {
	return func(w http.ResponseWriter, r *http.Request, status int, err error) {
		if !s.wantsJose(r) {
			platformError(w, r, s.log, status, err)
			return
		}
		jw := &joseWriter{ResponseWriter: w, header: http.Header{}}
		platformError(jw, r, s.log, status, err)
		jw.finish(s.jws)
	}
}

// mentionsJose is the cheap pre-check: an Accept that does not contain
// "jose" (in any case) cannot prefer it.
func mentionsJose(accept []string) bool {
	for _, a := range accept {
		for i := 0; i+4 <= len(a); i++ {
			if a[i]|0x20 == 'j' && a[i+1]|0x20 == 'o' && a[i+2]|0x20 == 's' && a[i+3]|0x20 == 'e' {
				return true
			}
		}
	}
	return false
}

// prefersJose parses the Accept media ranges (RFC 9110 12.5.1) and
// reports whether the client named application/jose with q > 0 and values
// it at least as much as JSON. JSON's weight is that of the most specific
// range matching application/json (application/json, else application/*,
// else */*), so "application/jose, */*;q=0.1" asks for JWS and
// "application/json, application/jose;q=0.5" does not. Equal weights go to
// JWS: a client that names application/jose at all is able to read it.
// Wildcards alone never select JWS.
func prefersJose(accept []string) bool {
	jose, json := acceptWeights(accept, joseContentType, "application/json")
	return jose > 0 && jose >= json
}

// acceptWeights reads the Accept media ranges (RFC 9110 12.5.1) and
// returns the weight the client gave the media type named exactly, and
// the weight of other: that of the most specific range matching it (other
// itself, else application/*, else */*). A type that no range matches
// weighs -1.
func acceptWeights(accept []string, named, other string) (namedQ, otherQ float64) {
	namedQ = -1
	// byRange holds the highest q given to */*, application/* and
	// other, by that index; -1 means not named.
	byRange := [3]float64{-1, -1, -1}
	for _, header := range accept {
		for _, item := range strings.Split(header, ",") {
			mediaType, params, _ := strings.Cut(item, ";")
			q := acceptQ(params)
			// Media types compare case-insensitively in ASCII (RFC 9110
			// §8.3.1) after optional white space, spaces and tabs:
			// strings.ToLower would make "applİcation/jose" one.
			switch mt := strings.Trim(mediaType, " \t"); {
			case equalFoldASCII(mt, named):
				namedQ = max(namedQ, q)
			case mt == "*/*":
				byRange[0] = max(byRange[0], q)
			case equalFoldASCII(mt, "application/*"):
				byRange[1] = max(byRange[1], q)
			case equalFoldASCII(mt, other):
				byRange[2] = max(byRange[2], q)
			}
		}
	}
	otherQ = -1
	for _, q := range byRange {
		if q >= 0 {
			otherQ = q
		}
	}
	return namedQ, otherQ
}

// equalFoldASCII is strings.EqualFold for ASCII letters only, as media
// types compare: no other letter folds to one of theirs (ſ to s, K to k).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// acceptQ reads the q parameter of one media range; a missing or
// unreadable q is 1, the RFC's default.
func acceptQ(params string) float64 {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		return qValue(strings.TrimSpace(value))
	}
	return 1
}

// qValue reads a weight (RFC 9110 §12.4.2): 0, 0.0 and 0.000 alike are 0,
// not acceptable; an unreadable one is 1, the RFC's default.
func qValue(value string) float64 {
	q, err := strconv.ParseFloat(value, 64)
	// Written so that NaN, which ParseFloat reads from "nan" and which max
	// would carry into every comparison, is unreadable too.
	if err != nil || !(q >= 0 && q <= 1) {
		return 1
	}
	return q
}

// joseWriter holds back a JSON answer so that it can be signed whole.
// Answers of other types (the digest's text/plain, HTML) pass through
// unchanged: only JSON documents have a JWS form.
type joseWriter struct {
	http.ResponseWriter
	header  http.Header // the handler's headers, copied out in finish or WriteHeader
	status  int
	buffer  bool // the answer is JSON and is being collected
	started bool // WriteHeader has been called
	body    bytes.Buffer
}

func (jw *joseWriter) Header() http.Header { return jw.header }

func (jw *joseWriter) WriteHeader(status int) {
	if jw.started {
		return
	}
	jw.started, jw.status = true, status
	ct := jw.header.Get("Content-Type")
	jw.buffer = strings.HasPrefix(ct, "application/json")
	if jw.buffer {
		return
	}
	copyHeader(jw.ResponseWriter.Header(), jw.header)
	jw.ResponseWriter.WriteHeader(status)
}

func (jw *joseWriter) Write(b []byte) (int, error) {
	if !jw.started {
		if jw.header.Get("Content-Type") == "" {
			// What net/http would sniff; the banking handlers always set
			// their type, so this only keeps the writer honest.
			jw.header.Set("Content-Type", http.DetectContentType(b))
		}
		jw.WriteHeader(http.StatusOK)
	}
	if jw.buffer {
		return jw.body.Write(b)
	}
	return jw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (jw *joseWriter) Unwrap() http.ResponseWriter { return jw.ResponseWriter }

// finish sends the collected JSON as a compact JWS of exactly its bytes,
// typed as an API answer (banking.JWSTypeAnswer) so that it cannot pass for
// a webhook.
// Signing cannot fail for a valid key; if it did, the answer goes out as
// the JSON it was rather than as nothing.
func (jw *joseWriter) finish(key *banking.BankKey) {
	if !jw.started {
		// A handler that wrote nothing: the empty 200 net/http would send.
		copyHeader(jw.ResponseWriter.Header(), jw.header)
		return
	}
	if !jw.buffer {
		return
	}
	h := jw.ResponseWriter.Header()
	copyHeader(h, jw.header)
	h.Del("Content-Length")
	h.Add("Vary", "Accept")
	compact, err := key.SignAnswer(jw.body.Bytes())
	if err != nil {
		jw.ResponseWriter.WriteHeader(jw.status)
		_, _ = jw.ResponseWriter.Write(jw.body.Bytes())
		return
	}
	h.Set("Content-Type", joseContentType)
	jw.ResponseWriter.WriteHeader(jw.status)
	_, _ = jw.ResponseWriter.Write([]byte(compact))
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

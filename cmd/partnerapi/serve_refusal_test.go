package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/testenv"
)

// TestServeRefusalsInEnvelope sends each listener of a real server, over
// raw TCP, requests that net/http refuses before any handler runs, and
// holds each answer to its API's error envelope: the status net/http
// chose, JSON of the API's form, Content-Length, Connection: close, and
// for banking a referenceId that is the answer's X-Request-Id and leads to
// a log line. Before, every one was net/http's text/plain.
func TestServeRefusalsInEnvelope(t *testing.T) {
	ts := startServer(t)
	requests := []struct {
		name   string
		req    string
		status int
		reason string // net/http's, in the assistant's and smart home's answers
	}{
		{"headers over 1 MiB", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", http.DefaultMaxHeaderBytes+64<<10) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, ""},
		{"malformed Host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, "malformed Host header"},
		{"invalid header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", http.StatusBadRequest, "invalid header name"},
		{"unknown Transfer-Encoding", "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
			http.StatusNotImplemented, "unsupported transfer encoding"},
		{"unknown Expect", "POST /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-unknown\r\nContent-Length: 2\r\n\r\n{}",
			http.StatusExpectationFailed, "unsupported Expect header"},
	}
	// Each API's check of a refusal's body, its headers already checked.
	envelopes := map[string]func(t *testing.T, resp *http.Response, body []byte, status int, reason string){
		"banking": func(t *testing.T, resp *http.Response, body []byte, status int, reason string) {
			var e struct{ Cause, ReferenceID, Message string }
			decodeStrict(t, body, &e)
			id := resp.Header.Get("X-Request-Id")
			if e.Cause != "VALIDATION_FAULT" || e.ReferenceID != id || e.Message == "" || (reason != "" && !strings.HasSuffix(e.Message, ": "+reason)) {
				t.Errorf("envelope %s, X-Request-Id %q", body, id)
			}
			if !strings.Contains(ts.logs.String(), "request_id="+id) {
				t.Errorf("referenceId %s leads to no log line", id)
			}
		},
		"assistant": func(t *testing.T, resp *http.Response, body []byte, status int, reason string) {
			var e struct {
				Status  int
				Message string
			}
			decodeStrict(t, body, &e)
			want := http.StatusText(status)
			if reason != "" {
				want += ": " + reason
			}
			if e.Status != status || e.Message != want || resp.Header.Get("X-Session-Id") == "" {
				t.Errorf("envelope %s, X-Session-Id %q", body, resp.Header.Get("X-Session-Id"))
			}
		},
		"smarthome": func(t *testing.T, resp *http.Response, body []byte, status int, reason string) {
			var e struct {
				Code    int
				Message string
				Details []string
			}
			decodeStrict(t, body, &e)
			want := []string{}
			if reason != "" {
				want = []string{reason}
			}
			if e.Code != status || e.Message != http.StatusText(status) || strings.Join(e.Details, "|") != strings.Join(want, "|") || e.Details == nil {
				t.Errorf("envelope %s", body)
			}
		},
	}
	for _, api := range []string{"banking", "assistant", "smarthome"} {
		for _, rq := range requests {
			t.Run(api+"/"+rq.name, func(t *testing.T) {
				resp, body := testenv.RawExchange(t, func() (net.Conn, error) { return net.Dial("tcp", strings.TrimPrefix(ts.urls[api], "http://")) }, rq.req)
				if resp.StatusCode != rq.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
				if !resp.Close || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) || resp.Header.Get("X-Request-Id") == "" {
					t.Errorf("close %v, Content-Length %q for %d bytes, X-Request-Id %q", resp.Close,
						resp.Header.Get("Content-Length"), len(body), resp.Header.Get("X-Request-Id"))
				}
				envelopes[api](t, resp, body, rq.status, rq.reason)
			})
		}
	}
}

// decodeStrict decodes an envelope that must have no member v lacks.
func decodeStrict(t *testing.T, body []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
}

package web

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/testenv"
)

// A refused request counts in partnerapi_http_refused_requests_total by
// API and the status it was answered with, on the /metrics of the very
// listener that refused it; an answered request does not. Before,
// refusals were logged but not counted.
func TestRefusalCounted(t *testing.T) {
	lg := slog.New(NewTextHandler(&testenv.LogBuffer{}, nil))
	built := API{Name: "test", Handler: http.NotFoundHandler(), Errors: envelopeErrors}.Build(lg, NewMetrics("t"))
	ln, err := Listen("test", "127.0.0.1:0", built, TLSFiles{}, lg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ln.Serve() }()
	t.Cleanup(func() { _ = ln.Shutdown(t.Context()) })
	addr := ln.Addr().String()
	dial := func() (net.Conn, error) { return net.Dial("tcp", addr) }
	want := map[int]int{}
	for _, tc := range refusalCases {
		if resp, _ := testenv.RawExchange(t, dial, tc.req); resp.StatusCode != tc.status {
			t.Fatalf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		want[tc.status]++
	}
	if resp, _ := testenv.RawExchange(t, dial, "GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /nowhere: %d", resp.StatusCode)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var got []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "partnerapi_http_refused_requests_total{") {
			got = append(got, line)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refusal series %q, want one for each of %v", got, want)
	}
	for status, n := range want {
		line := `partnerapi_http_refused_requests_total{api="test",status="` + strconv.Itoa(status) + `"} ` + strconv.Itoa(n)
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("/metrics lacks %s; has %q", line, got)
		}
	}
}

// Looking for refusals allocates nothing on a write that is not one: a
// handler's head and body, errors' heads (417 among them), a large write.
func TestRefusingConnWriteAllocatesNothing(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: 6f0e1c7a-3b1d-4c59-9d8e-2f4a6b7c8d90\r\n" +
		"Date: Mon, 30 Nov 2026 20:00:00 GMT\r\nContent-Length: 16\r\n\r\n"
	writes := []string{
		head + `{"status":"ok"}` + "\n",
		strings.Replace(head, "200 OK", "404 Not Found", 1) + `{"status":404}` + "\n",
		strings.Replace(head, "200 OK", "417 Expectation Failed", 1),
		head + strings.Repeat("y", 600),
	}
	rf := &refuser{api: "t", errs: envelopeErrors, log: quietLog(), refused: NewMetrics("t").refused}
	c := &refusingConn{Conn: discardConn{}, rf: rf}
	for _, w := range writes {
		p := []byte(w)
		if n := testing.AllocsPerRun(100, func() { _, _ = c.Write(p) }); n != 0 {
			t.Errorf("%.40q: %v allocations a write", p, n)
		}
	}
}

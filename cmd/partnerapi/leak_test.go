package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/banking"
	"partnerapi/internal/leaktest"
	"partnerapi/internal/sqlite"
)

// leakTarget is a running server with what the bursts need: the listeners'
// addresses, tokens, and a webhook receiver that fails most deliveries.
type leakTarget struct {
	ts                  *testServer
	grpcAddr            string
	bankTok, corp, pers string
	receiver            *httptest.Server
	client              *http.Client
	ids                 atomic.Int64
	mu                  sync.Mutex
	statuses            map[string]map[int]int // traffic kind → status → count
}

// TestServeGivesBackResourcesAfterHostileTraffic is the lasting guard of a
// server meant to run for weeks: bursts of the traffic most likely to
// strand a goroutine or a descriptor (SSE and gRPC streams the client
// abandons, requests over the per-client concurrency limit, webhook
// deliveries that fail and are retried, requests abandoned half-sent,
// rejected credentials, oversize and mistyped bodies, chats abandoned
// before their answer) go through the real server, and afterwards the
// process must hold what it held after warm-up, with none of it logged as
// a fault of the server's. Two measured bursts send 16 cancelled SSE
// streams and 10 signed payments whose webhooks fail, so one goroutine
// kept per stream or per failed delivery is well above the slack of six.
func TestServeGivesBackResourcesAfterHostileTraffic(t *testing.T) {
	lt := newLeakTarget(t)
	// Warm-up: the first burst opens what stays open by design (the SQLite
	// reader pool, the engine's scheduler and kernel workers, the KV
	// pool), so the baseline is the steady state.
	lt.burst(t)
	lt.settle(t)
	base := leaktest.Settled(3 * time.Second)
	for range 2 {
		lt.burst(t)
	}
	lt.settle(t)
	lt.receiver.Close()
	// The SQLite reader pool (eight connections, each holding the
	// database and its WAL) opens readers as concurrent reads ask: a
	// burst on a busy machine may open more than the warm-up did, and
	// those stay open by design.
	db := filepath.Join(lt.ts.dataDir, sqlite.FileName)
	pooled := map[string]int{db: 8, db + "-wal": 8}
	leaktest.WaitBack(t, base, leaktest.Slack{Goroutines: 6, FDs: 4, Pooled: pooled}, 12*time.Second)
	lt.checkTrafficHappened(t)
}

func newLeakTarget(t *testing.T) *leakTarget {
	data := t.TempDir()
	corp, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	pers, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=100000000")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--banking-webhook-allow-private",
		"--banking-webhook-interval", "20ms", "--banking-webhook-backoff", "30ms", "--banking-webhook-max-backoff", "60ms",
		"--banking-webhook-pause", "30ms", "--banking-webhook-max-pause", "60ms",
		"--banking-webhook-max-attempts", "3", "--banking-payment-rate", "100000", "--banking-payment-burst", "100000")
	// The later --data-dir wins over the one startServer made and recorded.
	ts.dataDir = data
	m := grpcAddrLog.FindStringSubmatch(ts.logs.String())
	if m == nil {
		t.Fatalf("no assistant-grpc listening line in logs:\n%s", ts.logs.String())
	}
	lt := &leakTarget{ts: ts, grpcAddr: m[1] + m[2], statuses: map[string]map[int]int{},
		// A transport of the test's own, so its idle connections can be
		// closed before each count and do not pass for the server's.
		client: &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}}
	lt.bankTok = "Bearer " + bankingToken(t, ts, banking.ScopePayDocRU)
	lt.corp = "Bearer " + assistantToken(t, ts.urls["assistant"], "ASSISTANT_API_CORP", corp["authorization_key"])
	lt.pers = "Bearer " + assistantToken(t, ts.urls["assistant"], "ASSISTANT_API_PERS", pers["authorization_key"])
	lt.receiver = httptest.NewServer(failingReceiver())
	t.Cleanup(lt.receiver.Close)
	hook := `{"url":"` + lt.receiver.URL + `/hook","format":"json"}`
	if st := lt.send("webhook set", "PUT", ts.urls["banking"]+"/fintech/api/v1/webhook", lt.bankTok, "application/json", hook); st != http.StatusOK {
		t.Fatalf("PUT /webhook: %d", st)
	}
	return lt
}

// failingReceiver answers four deliveries in five with a retryable
// failure: a 500, a connection closed without an answer, a 503 after a
// wait, a 502. Every answer closes its connection, so the dispatcher keeps
// no idle keep-alive connection that would blur the count.
func failingReceiver() http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Connection", "close")
		switch n.Add(1) % 5 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = c.Close()
			}
		case 2:
			time.Sleep(100 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		case 3:
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// burst runs one round of every kind of traffic at once and waits for it.
func (lt *leakTarget) burst(t *testing.T) {
	var wg sync.WaitGroup
	kinds := []func(){
		func() { lt.abandonedSSE(8, lt.corp, "sse cancelled") },
		// PERS clients may run one request at a time: the rest are 429.
		func() { lt.abandonedSSE(4, lt.pers, "sse over limit") },
		func() { lt.abandonedGRPC(t, 4) },
		lt.failingDeliveries,
		lt.abandonedRequests,
		lt.rejected,
	}
	for _, k := range kinds {
		wg.Go(k)
	}
	wg.Wait()
	// After the streams, so that the per-client limit has room for them.
	lt.abandonedChats(3)
}

// abandonedChats sends non-streaming chats one after another and gives up
// on each before its answer is ready, as a client with a short timeout.
func (lt *leakTarget) abandonedChats(n int) {
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		body := fmt.Sprintf(`{"model":"stories260K","max_tokens":1500,"messages":[{"role":"user","content":"Lily and Tom %d"}]}`, i)
		req, _ := http.NewRequestWithContext(ctx, "POST", lt.ts.urls["assistant"]+"/api/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", lt.corp)
		req.Header.Set("Content-Type", "application/json")
		st := -1
		if resp, err := lt.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			st = resp.StatusCode
		}
		cancel()
		lt.count("chat abandoned", st)
	}
}

// settle waits for the webhook outbox to reach final states (the retries
// come at most 60 ms apart) and closes the test's own idle connections.
func (lt *leakTarget) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for lt.pendingDeliveries(t) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("webhook outbox still has pending deliveries after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	lt.client.CloseIdleConnections()
}

// pendingDeliveries counts the partner's deliveries not yet final.
func (lt *leakTarget) pendingDeliveries(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest("GET", lt.ts.urls["banking"]+"/fintech/api/v1/webhook/deliveries?limit=500", nil)
	req.Header.Set("Authorization", lt.bankTok)
	resp, err := lt.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var log struct {
		Deliveries []struct {
			State    string
			Attempts int
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range log.Deliveries {
		if d.State == "PENDING" {
			n++
		}
		if d.Attempts > 1 {
			lt.count("webhook retried", 0)
		}
	}
	return n
}

// send makes one request, reads the answer whole and counts its status
// under kind (-1: no answer).
func (lt *leakTarget) send(kind, method, url, auth, ctype, body string) int {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	st := -1
	if resp, err := lt.client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		st = resp.StatusCode
	}
	lt.count(kind, st)
	return st
}

func (lt *leakTarget) count(kind string, status int) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.statuses[kind] == nil {
		lt.statuses[kind] = map[int]int{}
	}
	lt.statuses[kind][status]++
}

// abandonedSSE starts n streaming chats at once, reads the first event of
// each that is answered and then drops the connection, as a browser tab
// closed mid-answer does.
func (lt *leakTarget) abandonedSSE(n int, auth, kind string) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"model":"stories260K","max_tokens":1500,"stream":true,"messages":[{"role":"user","content":"Once upon a time %d"}]}`, i)
			req, _ := http.NewRequestWithContext(ctx, "POST", lt.ts.urls["assistant"]+"/api/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", auth)
			req.Header.Set("Content-Type", "application/json")
			resp, err := lt.client.Do(req)
			if err != nil {
				lt.count(kind, -1)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				line, _ := bufio.NewReader(resp.Body).ReadString('\n')
				if !strings.HasPrefix(line, "data:") {
					lt.count(kind, -2)
					return
				}
			}
			lt.count(kind, resp.StatusCode)
		})
	}
	wg.Wait()
}

// abandonedGRPC starts n gRPC chat streams, takes one message of each and
// cancels, and sends as many calls with a token that is no token.
func (lt *leakTarget) abandonedGRPC(t *testing.T, n int) {
	conn, err := grpc.NewClient(lt.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close()
	chat := pb.NewChatServiceClient(conn)
	req := &pb.ChatRequest{Model: "stories260K", Options: &pb.ChatOptions{MaxTokens: proto.Int32(1500)},
		Messages: []*pb.Message{{Role: "user", Content: "Lily had a cat"}}}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), "authorization", lt.corp))
			defer cancel()
			s, err := chat.ChatStream(ctx, req)
			if err == nil {
				_, err = s.Recv()
			}
			lt.count("grpc cancelled", map[bool]int{true: 0, false: -1}[err == nil])
		})
		wg.Go(func() {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer not-a-token")
			_, err := chat.Chat(ctx, req)
			lt.count("grpc rejected", map[bool]int{true: 0, false: -1}[err == nil])
		})
	}
	wg.Wait()
}

// failingDeliveries creates signed payments, each final at once, so each
// queues a webhook that the receiver mostly refuses.
func (lt *leakTarget) failingDeliveries() {
	for range 5 {
		id := fmt.Sprintf("1ea40000-0000-4000-8000-%012d", lt.ids.Add(1))
		doc := bankDoc(id, map[string]any{"digestSignatures": signatures(banking.SandboxCertSole)})
		lt.send("signed payment", "POST", lt.ts.urls["banking"]+"/fintech/api/v1/payments", lt.bankTok, "application/json", doc)
	}
}

// abandonedRequests opens connections to every listener that send part
// of a request (nothing, half a header, headers with half the declared
// body, half an HTTP/2 preface) and then hang up.
func (lt *leakTarget) abandonedRequests() {
	partial := []string{
		"",
		"POST /x HTTP/1.1\r\nHost: x\r\nContent-Ty",
		"POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nAuthorization: Bearer x\r\n\r\n{\"model\":",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00",
	}
	addrs := []string{lt.grpcAddr}
	for _, api := range []string{"banking", "assistant", "smarthome"} {
		addrs = append(addrs, strings.TrimPrefix(lt.ts.urls[api], "http://"))
	}
	var conns []net.Conn
	for _, a := range addrs {
		for _, p := range partial {
			c, err := net.Dial("tcp", a)
			if err != nil {
				lt.count("abandoned", -1)
				continue
			}
			_, _ = c.Write([]byte(p))
			conns = append(conns, c)
			lt.count("abandoned", 0)
		}
	}
	// Long enough for the server to have started reading each request.
	time.Sleep(200 * time.Millisecond)
	for _, c := range conns {
		_ = c.Close()
	}
}

// rejected sends every API requests it must refuse: credentials that are
// no credentials, a mistyped body and one over the 1 MiB cap.
func (lt *leakTarget) rejected() {
	big := bytes.Repeat([]byte(" "), 2<<20)
	for _, c := range []struct{ kind, method, path, auth, ctype, body string }{
		{"rejected auth", "POST", lt.ts.urls["banking"] + "/fintech/api/v1/payments", "Bearer not-a-token", "application/json", "{}"},
		{"rejected auth", "POST", lt.ts.urls["assistant"] + "/api/v1/chat/completions", "Bearer not-a-token", "application/json", "{}"},
		{"rejected auth", "GET", lt.ts.urls["smarthome"] + "/v1/mqtt-gate/categories", "Basic bm86bm8=", "", ""},
		{"rejected auth", "POST", lt.ts.urls["assistant"] + "/api/v2/oauth", "Basic %%%", "application/x-www-form-urlencoded", "scope=x"},
		{"wrong type", "POST", lt.ts.urls["banking"] + "/fintech/api/v1/payments", lt.bankTok, "text/plain", "{}"},
		{"too large", "POST", lt.ts.urls["banking"] + "/fintech/api/v1/payments", lt.bankTok, "application/json", "{" + string(big) + "}"},
		{"too large", "POST", lt.ts.urls["assistant"] + "/api/v1/chat/completions", lt.corp, "application/json", "{" + string(big) + "}"},
	} {
		lt.send(c.kind, c.method, c.path, c.auth, c.ctype, c.body)
	}
}

// checkTrafficHappened keeps the guard from passing vacuously: each kind
// of traffic must have been answered as it was meant to be.
func (lt *leakTarget) checkTrafficHappened(t *testing.T) {
	t.Helper()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, want := range []struct {
		kind   string
		status int
	}{
		{"sse cancelled", 200}, {"sse over limit", 200}, {"sse over limit", 429}, {"grpc cancelled", 0}, {"grpc rejected", -1},
		{"signed payment", 201}, {"webhook retried", 0}, {"abandoned", 0}, {"rejected auth", 401}, {"wrong type", 400}, {"too large", 413},
	} {
		if lt.statuses[want.kind][want.status] == 0 {
			t.Errorf("no %q answered %d: %v", want.kind, want.status, lt.statuses)
		}
	}
	// A client that gives up is no failure of the server's: logged as an
	// internal error it would page an operator for every closed tab.
	logs := lt.ts.logs.String()
	if !strings.Contains(logs, "status=499") {
		t.Errorf("no abandoned chat reached the handler (no 499 in the access log): %v", lt.statuses["chat abandoned"])
	}
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "internal error") {
			t.Errorf("hostile traffic logged as a server fault: %s", line)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	pb "partnerapi/internal/assistant/gigachatpb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

type oneModelEngine struct{}

func (oneModelEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat"}}, nil
}
func (oneModelEngine) CountTokens(context.Context, string, string) (int, error) { return 0, nil }
func (oneModelEngine) Generate(context.Context, assistant.GenerateRequest, func(assistant.Delta) error) (assistant.Result, error) {
	return assistant.Result{}, nil
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (web.TLSFiles, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	files := web.TLSFiles{Cert: filepath.Join(dir, "c.pem"), Key: filepath.Join(dir, "k.pem")}
	os.WriteFile(files.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(files.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return files, pool
}

// TestAssistantGRPCSidecarTLS serves the sidecar over TLS with the HTTP
// listeners' cert flags, checks health (open) and auth (16 when configured),
// then stops it gracefully.
func TestAssistantGRPCSidecarTLS(t *testing.T) {
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	svc := assistant.NewService(assistantsql.New(db), oneModelEngine{}, assistant.Config{})
	files, pool := selfSigned(t)
	if _, _, _, err := assistantGRPCSidecar(assistantGRPCConfig{addr: "127.0.0.1:0", authCode: 5}, svc, files, discardLogger()); err == nil {
		t.Fatal("auth code 5 accepted")
	}
	sc, addr, ok, err := assistantGRPCSidecar(assistantGRPCConfig{addr: "127.0.0.1:0", authCode: 16}, svc, files, discardLogger())
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	served := make(chan error, 1)
	go func() { served <- sc.serve() }()

	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health over TLS: %v, %v", h, err)
	}
	_, err = pb.NewModelsServiceClient(conn).ListModels(context.Background(), &pb.ListModelsRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v, want UNAUTHENTICATED", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sc.stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve after stop: %v", err)
	}
	if _, _, ok, _ := assistantGRPCSidecar(assistantGRPCConfig{addr: "off"}, svc, files, discardLogger()); ok {
		t.Fatal(`"off" did not disable the listener`)
	}
}

var grpcAddrLog = regexp.MustCompile(`service=assistant-grpc addr=(\S+)|"service":"assistant-grpc","addr":"([^"]+)"`)

// TestAssistantGRPCMatchesREST starts the real binary's server, provisions a
// client with the CLI, takes a token from REST and sends the same greedy
// request to REST and to gRPC (unary and stream): same text, same usage.
func TestAssistantGRPCMatchesREST(t *testing.T) {
	models := t.TempDir()
	if err := os.Symlink(testenv.Model(t, "stories260K.gguf"), filepath.Join(models, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	// No prefix cache: the requests share their prompt, and prompt_tokens
	// leaves out what a cache reuses.
	ts := startServer(t, "--models-dir", models, "--assistant-prefix-cache", "0")
	m := grpcAddrLog.FindStringSubmatch(ts.logs.String())
	if m == nil {
		t.Fatalf("no assistant-grpc listening line in logs:\n%s", ts.logs.String())
	}
	addr := m[1] + m[2]

	var out bytes.Buffer
	if err := runAssistant(context.Background(), []string{"client", "create", "--data-dir", ts.dataDir, "--scope", "ASSISTANT_API_CORP"},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var creds assistant.Credentials
	if err := json.Unmarshal(out.Bytes(), &creds); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", ts.urls["assistant"]+"/api/v2/oauth", strings.NewReader(url.Values{"scope": {"ASSISTANT_API_CORP"}}.Encode()))
	req.Header.Set("Authorization", "Basic "+creds.AuthorizationKey)
	req.Header.Set("RqUID", "6f0b1291-c7f3-43c6-bb2e-9f3efb2dc98e")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if tok.AccessToken == "" {
			t.Fatalf("oauth: %d", resp.StatusCode)
		}
	}

	body := `{"model":"stories260K","temperature":0,"max_tokens":20,"messages":[{"role":"user","content":"Lily had a cat"}]}`
	req, _ = http.NewRequest("POST", ts.urls["assistant"]+"/api/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rest struct {
		Choices []struct {
			Message struct{ Content string }
		}
		Usage struct {
			PromptTokens     int32 `json:"prompt_tokens"`
			CompletionTokens int32 `json:"completion_tokens"`
			TotalTokens      int32 `json:"total_tokens"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&rest)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(rest.Choices) != 1 {
		t.Fatalf("REST chat: %d %+v", resp.StatusCode, rest)
	}
	want := &pb.Usage{PromptTokens: rest.Usage.PromptTokens, CompletionTokens: rest.Usage.CompletionTokens, TotalTokens: rest.Usage.TotalTokens}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok.AccessToken)
	greq := &pb.ChatRequest{Model: "stories260K", Options: &pb.ChatOptions{Temperature: proto.Float32(0), MaxTokens: proto.Int32(20)},
		Messages: []*pb.Message{{Role: "user", Content: "Lily had a cat"}}}
	chat := pb.NewChatServiceClient(conn)
	g, err := chat.Chat(ctx, greq)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Alternatives[0].Message.Content; got != rest.Choices[0].Message.Content || !proto.Equal(g.Usage, want) {
		t.Fatalf("gRPC %q %v, REST %q %v", got, g.Usage, rest.Choices[0].Message.Content, want)
	}
	st, err := chat.ChatStream(ctx, greq)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var last *pb.ChatResponse
	for {
		m, err := st.Recv()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		text += m.Alternatives[0].Message.Content
		last = m
	}
	if text != rest.Choices[0].Message.Content || !proto.Equal(last.Usage, want) {
		t.Fatalf("gRPC stream %q %v, REST %q %v", text, last.Usage, rest.Choices[0].Message.Content, want)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "/gigachat.v1.ChatService/ChatStream") || strings.Contains(logs, tok.AccessToken) {
		t.Errorf("gRPC access log missing a ChatStream line, or logs the token:\n%s", logs)
	}
}

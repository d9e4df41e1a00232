package main

import (
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// langChainMessage is an AIMessage as clients/npm/langchain.js reports it.
type langChainMessage struct {
	Type      string
	Content   string
	ToolCalls []struct {
		Name string
		Args map[string]any
		ID   string
	} `json:"tool_calls"`
	Usage *struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
		Total  int `json:"total_tokens"`
	}
	Finish    string
	RequestID string `json:"request_id"`
}

// TestLangChainClient runs the npm `langchain-gigachat` package, unmodified,
// against a live server: stories260K on the local engine for invoke, stream
// and a refused tool binding, and a fake upstream for what the tiny model
// cannot do on demand (a function call, passed back with its result) or at
// all (embeddings).
func TestLangChainClient(t *testing.T) {
	node, pkg := npmClient(t, "the npm langchain-gigachat client test")
	// @langchain/core 1.x and langsmith need Node 20 or later; with an
	// older node npm ci only warns and the script would fail for reasons
	// of the machine, not of the server.
	if v, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output(); err != nil {
		t.Fatalf("node version: %v", err)
	} else if major, err := strconv.Atoi(strings.TrimSpace(string(v))); err != nil || major < 20 {
		t.Skipf("SKIPPING: langchain-gigachat needs Node 20 or later, this machine has %s; the LangChain client test did not run", v)
	}
	fake := &fakeOpenAI{t: t, hangDone: make(chan struct{})}
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_B2B",
		"--balance", "stories260K=100000", "--balance", "GigaChat=100000", "--balance", "Embeddings=1000")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant",
		"--assistant-upstream", "GigaChat="+up.URL+"#model=qwen2.5-7b",
		"--assistant-upstream", "Embeddings="+up.URL+"#model=nomic-embed&type=embedder")
	base := ts.urls["assistant"]
	out, err := runClientScript(node, pkg, "langchain.js", 2*time.Minute, base, creds["authorization_key"], "GIGACHAT_API_B2B", "stories260K",
		"SMOKE_TOOLS_MODEL=GigaChat", "SMOKE_EMBEDDINGS_MODEL=Embeddings")
	var res struct {
		Invoke langChainMessage
		Stream struct {
			Content string
			Chunks  int
		}
		ToolsLocal      *langChainMessage `json:"tools_local"`
		ToolsLocalError *struct {
			Status int
			Data   struct{ Message string }
		} `json:"tools_local_error"`
		ToolCall       langChainMessage `json:"tool_call"`
		ToolCallStream langChainMessage `json:"tool_call_stream"`
		ToolResult     langChainMessage `json:"tool_result"`
		Structured     map[string]any
		EmbedQuery     []float64   `json:"embed_query"`
		EmbedDocuments [][]float64 `json:"embed_documents"`
	}
	npmResult(t, out, err, &res)

	inv := res.Invoke
	if inv.Type != "ai" || inv.Content == "" || inv.Finish != "length" || inv.RequestID == "" ||
		inv.Usage == nil || inv.Usage.Input < 1 || inv.Usage.Output != 12 || inv.Usage.Total != inv.Usage.Input+inv.Usage.Output {
		t.Errorf("invoke %+v usage %+v", inv, inv.Usage)
	}
	// Greedy: the stream must say exactly what the JSON answer said.
	if res.Stream.Content != inv.Content || res.Stream.Chunks < 3 {
		t.Errorf("stream %+v, invoke %q", res.Stream, inv.Content)
	}
	// stories260K's template cannot show functions: the server refuses
	// them before generating, and LangChain must hand over the status. Were
	// the model ever to take them, the answer must be a well-formed
	// AIMessage: text, or a call of the one tool offered.
	switch {
	case res.ToolsLocalError != nil:
		if res.ToolsLocalError.Status != 422 || res.ToolsLocalError.Data.Message != "Requested model does not support functions" {
			t.Errorf("local tools error %+v", *res.ToolsLocalError)
		}
	case res.ToolsLocal == nil || res.ToolsLocal.Type != "ai" ||
		len(res.ToolsLocal.ToolCalls) > 0 && res.ToolsLocal.ToolCalls[0].Name != "weather_forecast":
		t.Errorf("local tools answer %+v", res.ToolsLocal)
	}

	wantArgs := map[string]any{"location": "Манжерок", "num_days": float64(10)}
	for name, m := range map[string]langChainMessage{"invoke": res.ToolCall, "stream": res.ToolCallStream} {
		if len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "weather_forecast" || !reflect.DeepEqual(m.ToolCalls[0].Args, wantArgs) {
			t.Errorf("tool call (%s) %+v", name, m)
		}
	}
	if res.ToolCall.Finish != "function_call" || res.ToolCall.Usage == nil || res.ToolCall.Usage.Total != 313 {
		t.Errorf("tool call %+v", res.ToolCall)
	}
	if res.ToolResult.Content != "Hello." || res.ToolResult.Finish != "stop" || len(res.ToolResult.ToolCalls) != 0 {
		t.Errorf("answer to the tool result %+v", res.ToolResult)
	}
	if !reflect.DeepEqual(res.Structured, wantArgs) {
		t.Errorf("withStructuredOutput %v", res.Structured)
	}

	// What LangChain sent reached the upstream as OpenAI tool calling: the
	// forced function as tool_choice, and the call passed back answered by
	// its result, the object LangChain serialised twice decoded once.
	fake.mu.Lock()
	reqs := fake.requests
	fake.mu.Unlock()
	for _, r := range reqs {
		if choice, _ := json.Marshal(r["tool_choice"]); string(choice) != `{"function":{"name":"weather_forecast"},"type":"function"}` {
			t.Errorf("upstream tool_choice %s", choice)
		}
	}
	if len(reqs) == 0 {
		t.Fatal("no chat request reached the upstream")
	}
	var back []struct {
		Role       string
		Content    string
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	msgs, _ := json.Marshal(reqs[len(reqs)-2]["messages"]) // the last is withStructuredOutput's
	if err := json.Unmarshal(msgs, &back); err != nil || len(back) != 3 || len(back[1].ToolCalls) != 1 ||
		back[1].ToolCalls[0].Function.Name != "weather_forecast" || back[2].Role != "tool" ||
		back[2].ToolCallID != back[1].ToolCalls[0].ID || back[2].Content != `{"temperature":3}` {
		t.Errorf("upstream got %s", msgs)
	}

	if !reflect.DeepEqual(res.EmbedQuery, []float64{10, 0.5}) ||
		!reflect.DeepEqual(res.EmbedDocuments, [][]float64{{10, 0.5}, {16, 0.5}}) {
		t.Errorf("embeddings: query %v, documents %v", res.EmbedQuery, res.EmbedDocuments)
	}
}

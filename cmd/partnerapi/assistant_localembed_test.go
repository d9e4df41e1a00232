package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/inference/local"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/testenv"
)

// TestAssistantLocalEmbeddings serves stories260K twice from --models-dir,
// once as a chat model and once (as "tinyembed", with a manifest saying
// "type": "embedder") as an embeddings model, and checks POST
// /api/v1/embeddings end to end: per-item usage and no top-level usage
// (reference §3.7), vectors equal to the model's own pooled embedding of
// the tokenized inputs, 413 over the window and 422 for a chat model.
func TestAssistantLocalEmbeddings(t *testing.T) {
	models := chatAndEmbedderModels(t)
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "tinyembed=10000", "--balance", "stories260K=10000")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", models, "--only", "assistant")
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_PERS", creds["authorization_key"])}
	ctx := context.Background()

	// The expected vectors come from the model package directly, over the
	// same file.
	ref, err := local.LoadModel(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })

	t.Run("embeddings", func(t *testing.T) {
		inputs := []string{"Once upon a time", "Once upon a time there was a cat", "Once upon a time"}
		body, _ := json.Marshal(map[string]any{"model": "tinyembed", "input": inputs})
		resp, raw := c.do(ctx, "POST", "/api/v1/embeddings", string(body))
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"data", "model", "object"}) {
			t.Errorf("top-level keys %v (no usage at the top level)", keys)
		}
		var out struct {
			Object string
			Model  string
			Data   []struct {
				Object    string
				Index     int
				Embedding []float32
				Usage     map[string]int
			}
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		if out.Object != "list" || out.Model != "tinyembed" || len(out.Data) != len(inputs) {
			t.Fatalf("envelope %s", raw)
		}
		for i, d := range out.Data {
			ids := ref.Tokenizer.Encode(inputs[i], true, false)
			want, err := ref.Net.Embed(ctx, ids, model.PoolingMean)
			if err != nil {
				t.Fatal(err)
			}
			if d.Object != "embedding" || d.Index != i || len(d.Usage) != 1 || d.Usage["prompt_tokens"] != len(ids) {
				t.Errorf("item %d: object %q index %d usage %v, want %d prompt tokens", i, d.Object, d.Index, d.Usage, len(ids))
			}
			if !slices.Equal(d.Embedding, want) {
				t.Errorf("item %d: the vector differs from the model's embedding of its tokens", i)
			}
			var ss float64
			for _, v := range d.Embedding {
				ss += float64(v) * float64(v)
			}
			if len(d.Embedding) != ref.Net.NEmbd || math.Abs(ss-1) > 1e-5 {
				t.Errorf("item %d: length %d, squared norm %v", i, len(d.Embedding), ss)
			}
		}
		if !slices.Equal(out.Data[0].Embedding, out.Data[2].Embedding) || slices.Equal(out.Data[0].Embedding, out.Data[1].Embedding) {
			t.Error("identical texts must give identical vectors, different texts different ones")
		}
	})
	t.Run("refusals", func(t *testing.T) {
		long := strings.Repeat("Once upon a time there was a little girl. ", 10)
		for _, tc := range []struct {
			name, path, body string
			status           int
			want             string
		}{
			{"over the window", "/api/v1/embeddings", `{"model":"tinyembed","input":["short","` + long + `"]}`,
				413, `{"status":413,"message":"Payload too large"}`},
			{"chat model", "/api/v1/embeddings", `{"model":"stories260K","input":["x"]}`,
				422, `{"status":422,"message":"Requested model does not support embeddings"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := c.do(ctx, "POST", tc.path, tc.body)
				if resp.StatusCode != tc.status || strings.TrimSpace(string(body)) != tc.want {
					t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tc.status, tc.want)
				}
			})
		}
	})
}

// chatAndEmbedderModels is a models directory serving stories260K twice:
// as the chat model stories260K and, through a manifest, as the embedder
// tinyembed with a 32-token window.
func chatAndEmbedderModels(t *testing.T) string {
	t.Helper()
	src := testenv.Model(t, "stories260K.gguf")
	models := t.TempDir()
	for _, name := range []string{"stories260K", "tinyembed"} {
		if err := os.Symlink(src, filepath.Join(models, name+".gguf")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(models, "tinyembed.json"), []byte(`{"type":"embedder","context_window":32}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return models
}

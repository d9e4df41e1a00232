package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// --assistant-ai-check-threshold moves the line: a person's sentence is
// human under the default and generated under a threshold above any
// surprisal it has; a threshold that is not a positive number ends serve.
func TestAICheckThresholdFlag(t *testing.T) {
	const sentence = "Every benchmark prints ratios measured side by side in one run, against the memory bandwidth it measures."
	for _, tc := range []struct {
		flag, want string
	}{
		{"", "human"},
		{"50", "ai"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			data := t.TempDir()
			creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant"}
			if tc.flag != "" {
				args = append(args, "--assistant-ai-check-threshold", tc.flag)
			}
			base := startServer(t, args...).urls["assistant"]
			tok := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
			body, _ := json.Marshal(map[string]string{"model": "stories260K", "input": sentence})
			req, _ := http.NewRequest("POST", base+"/api/v1/ai/check", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var res struct {
				Category    string
				Characters  int
				AIIntervals [][]int `json:"ai_intervals"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			if res.Category != tc.want || res.Characters != len(sentence) {
				t.Fatalf("%+v, want %s", res, tc.want)
			}
		})
	}
	if err := serve(t.Context(), []string{"--only", "assistant", "--data-dir", t.TempDir(), "--assistant-ai-check-threshold", "0"},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &strings.Builder{}, err: &strings.Builder{}}, nil); err == nil {
		t.Fatal("serve took a threshold of 0")
	}
}

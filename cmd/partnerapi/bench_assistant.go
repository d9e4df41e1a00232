package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"partnerapi/internal/assistant/upstream"
	"partnerapi/internal/inference/local"
)

func init() { benchmarks["assistant"] = benchAssistant }

// benchAssistant is `partnerapi bench assistant`: it starts the assistant in
// process over a scratch store, then runs concurrent streaming chats and
// reports time to first token and aggregate generation throughput.
func benchAssistant(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("bench assistant", flag.ContinueOnError)
	modelsDir := fs.String("models-dir", "./models", "directory of GGUF models")
	model := fs.String("model", "", "model to chat with (default: the first served)")
	clients := fs.Int("clients", 10, "concurrent streaming clients")
	maxTokens := fs.Int("max-tokens", 128, "max_tokens of each chat")
	prompt := fs.String("prompt", "Once upon a time", "user message")
	temperature := fs.Float64("temperature", 0.8, "temperature of each chat (0: greedy)")
	joinStep := fs.Duration("join-step", local.DefaultJoinStep, "the server's --assistant-join-step (0: fixed 16-token prompt chunks while streams decode)")
	distinct := fs.Bool("distinct-prompts", false, "start each client's message with its own number, so that the prompts share no prefix and each is prefilled on its own (else the later clients reuse the first one's prefill)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	data, err := os.MkdirTemp("", "partnerapi-bench-assistant")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	var out strings.Builder
	if err := runAssistant(ctx, []string{"client", "create", "--data-dir", data, "--scope", "ASSISTANT_API_CORP"}, getenv,
		stdio{in: strings.NewReader(""), out: &out, err: io.err}); err != nil {
		return err
	}
	var creds struct {
		Key string `json:"authorization_key"`
	}
	if err := json.Unmarshal([]byte(out.String()), &creds); err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan map[string]string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- serve(sctx, []string{"--only", "assistant", "--data-dir", data, "--models-dir", filepath.Clean(*modelsDir),
			// The benchmark speaks HTTP only: no gRPC listener on the
			// default port, which a server already running would hold.
			"--assistant-addr", "127.0.0.1:0", "--assistant-grpc-addr", "off", "--assistant-limit-corp", fmt.Sprint(*clients), "--log-format", "json",
			"--assistant-join-step", joinStep.String()},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: nopWriter{}, err: nopWriter{}}, func(a map[string]string) { ready <- a })
	}()
	var base string
	select {
	case a := <-ready:
		base = "http://" + a["assistant"]
	case err := <-errc:
		return fmt.Errorf("serve: %v", err)
	}
	defer func() { stop(); <-errc }()

	token, err := benchToken(ctx, base, creds.Key)
	if err != nil {
		return err
	}
	if *model == "" {
		if *model, err = benchFirstModel(ctx, base, token); err != nil {
			return err
		}
	}
	bodies := make([][]byte, *clients)
	for i := range bodies {
		content := *prompt
		if *distinct {
			content = fmt.Sprintf("%d. %s", i+1, content)
		}
		bodies[i], _ = json.Marshal(map[string]any{"model": *model, "stream": true, "max_tokens": *maxTokens, "temperature": *temperature,
			"messages": []map[string]string{{"role": "user", "content": content}}})
	}
	type result struct {
		ttft   time.Duration
		tokens int
		gaps   []time.Duration
		err    error
	}
	results := make([]result, *clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].ttft, results[i].tokens, results[i].gaps, results[i].err = benchStream(ctx, base, token, bodies[i])
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var ttfts, gaps []time.Duration
	total := 0
	for i, r := range results {
		if r.err != nil {
			return fmt.Errorf("client %d: %w", i, r.err)
		}
		ttfts = append(ttfts, r.ttft)
		gaps = append(gaps, r.gaps...)
		total += r.tokens
	}
	slices.Sort(ttfts)
	slices.Sort(gaps)
	fmt.Fprintf(io.out, "model %s, %d concurrent streaming clients, max_tokens %d, temperature %v\n", *model, *clients, *maxTokens, *temperature)
	fmt.Fprintf(io.out, "time to first token: min %v  median %v  max %v\n",
		ttfts[0].Round(time.Millisecond), ttfts[len(ttfts)/2].Round(time.Millisecond), ttfts[len(ttfts)-1].Round(time.Millisecond))
	if len(gaps) > 0 {
		// How evenly the stream arrives: the time between one event and
		// the next at the client, which clumps show as a few long gaps.
		fmt.Fprintf(io.out, "between streamed events: median %v  p99 %v  max %v\n",
			gaps[len(gaps)/2].Round(10*time.Microsecond), gaps[len(gaps)*99/100].Round(10*time.Microsecond), gaps[len(gaps)-1].Round(10*time.Microsecond))
	}
	fmt.Fprintf(io.out, "completion tokens %d in %v: %.1f tok/s aggregate\n", total, wall.Round(time.Millisecond), float64(total)/wall.Seconds())
	return nil
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func benchToken(ctx context.Context, base, key string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v2/oauth", strings.NewReader(url.Values{"scope": {"ASSISTANT_API_CORP"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Basic "+key)
	req.Header.Set("RqUID", "00000000-0000-4000-8000-000000000000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 {
		return "", fmt.Errorf("token: status %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken, nil
}

func benchFirstModel(ctx context.Context, base, token string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	if len(list.Data) == 0 {
		return "", fmt.Errorf("no models served; put a NAME.gguf in --models-dir")
	}
	return list.Data[0].ID, nil
}

// benchStream runs one streaming chat and returns the time to the first
// content event, the completion tokens the final usage reports and the
// time between each event and the next.
func benchStream(ctx context.Context, base, token string, body []byte) (time.Duration, int, []time.Duration, error) {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, 0, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var ttft time.Duration
	var gaps []time.Duration
	var last time.Time
	tokens := 0
	// The stream is read as the event-stream format says (WHATWG HTML
	// §9.2.6), as the upstream reader reads it: lines end with CRLF, LF
	// or a bare CR, a data field's value is what follows "data:" and one
	// space, and an event is its data lines joined by LF, dispatched at
	// the blank line after them. Reading LF-only lines with "data: "
	// glued on took a stream from a server (or a proxy before ours) that
	// ends lines with CR for one line of bad JSON.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Split(upstream.ScanSSELines)
	var data []string
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
			continue
		}
		payload := strings.Join(data, "\n")
		data = data[:0]
		if len(payload) == 0 || payload == "[DONE]" {
			continue
		}
		now := time.Now()
		if ttft == 0 {
			ttft = now.Sub(start)
		} else {
			gaps = append(gaps, now.Sub(last))
		}
		last = now
		var ev struct {
			Usage *struct {
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			return 0, 0, nil, err
		}
		if ev.Usage != nil {
			tokens = ev.Usage.Completion
		}
	}
	return ttft, tokens, gaps, sc.Err()
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"partnerapi/internal/inference/local"
)

// runGenerate implements `partnerapi generate`: it continues a raw prompt
// (no chat template) with a local GGUF model and streams the continuation to
// stdout as it is produced. Its flags take their PARTNERAPI_<FLAG> forms
// from getenv, as every command's do.
func runGenerate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	modelPath := fs.String("model", "", "GGUF model file")
	prompt := fs.String("prompt", "", "prompt text to continue")
	n := fs.Int("n", 64, "tokens to generate")
	temperature := fs.Float64("temperature", 0, "sampling temperature (≤ 0.001: greedy)")
	topP := fs.Float64("top-p", 1, "nucleus sampling mass (1: off)")
	repeat := fs.Float64("repeat-penalty", 1, "repetition penalty (1: off)")
	seed := fs.Uint64("seed", 0, "random seed (0: random)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("generate: unexpected arguments %q", fs.Args())
	}
	if *modelPath == "" {
		return errors.New("generate: --model is required")
	}
	if *n <= 0 {
		return errors.New("generate: -n must be positive")
	}
	m, err := local.LoadModel(*modelPath)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	defer m.Close()
	ids := m.Tokenizer.Encode(*prompt, true, false)
	if len(ids) == 0 {
		return errors.New("generate: the prompt encodes to no tokens and the model adds no BOS")
	}
	start := time.Now()
	comps, err := m.Generate(ctx, ids, local.GenerateParams{
		Temperature:       *temperature,
		TopP:              *topP,
		RepetitionPenalty: *repeat,
		Seed:              *seed,
		MaxTokens:         *n,
		N:                 1,
		Continuation:      true,
	}, func(_ int, text string) error {
		_, err := io.WriteString(stdout, text)
		return err
	})
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if _, err := io.WriteString(stdout, "\n"); err != nil {
		return err
	}
	// Timing goes to stderr so that stdout stays the bare continuation.
	elapsed := time.Since(start)
	generated := len(comps[0].Tokens)
	fmt.Fprintf(stderr, "prompt %d tokens, generated %d tokens (%s) in %v: %.1f tok/s overall\n",
		len(ids), generated, comps[0].FinishReason, elapsed.Round(time.Millisecond), float64(len(ids)+generated)/elapsed.Seconds())
	return nil
}

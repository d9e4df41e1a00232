package main

import (
	"bytes"
	"context"
	"testing"

	"partnerapi/internal/testenv"
)

func TestRunGenerate(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr bool
	}{
		{name: "greedy reference", args: []string{"--model", path, "--prompt", "Once upon a time", "-n", "40"},
			want: ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.\n"},
		{name: "greedy reference to 64 tokens", args: []string{"--model", path, "--prompt", "Once upon a time", "-n", "64"},
			want: ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said\n"},
		{name: "continuation keeps the leading space", args: []string{"--model", path, "--prompt", "Lily and Tom went to the", "-n", "18"},
			want: " park. They saw a big box with a big box.\n"},
		{name: "missing model", args: []string{"--prompt", "x"}, wantErr: true},
		{name: "bad n", args: []string{"--model", path, "-n", "0"}, wantErr: true},
		{name: "no such file", args: []string{"--model", "/nonexistent.gguf"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runGenerate(context.Background(), tc.args, noEnv, &out, &errOut)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("accepted; output %q", out.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err, errOut.String())
			}
			if out.String() != tc.want {
				t.Errorf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
	// A seeded sampled run is reproducible.
	run := func() string {
		var out bytes.Buffer
		args := []string{"--model", path, "--prompt", "Once upon a time", "-n", "30", "--temperature", "0.9", "--top-p", "0.9", "--seed", "7"}
		if err := runGenerate(context.Background(), args, noEnv, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if a, b := run(), run(); a != b {
		t.Errorf("seeded runs differ: %q vs %q", a, b)
	}
}

package main

import (
	"context"
	"errors"
	"io"
)

// runGenerate is replaced by the engine's implementation.
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("generate: the inference engine is not built yet")
}

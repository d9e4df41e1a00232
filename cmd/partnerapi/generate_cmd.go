package main

import "context"

// runGenerateCommand adapts runGenerate (the engine's raw-prompt command in
// generate.go) to the command table.
func runGenerateCommand(ctx context.Context, args []string, _ func(string) string, io stdio) error {
	return runGenerate(ctx, args, io.out, io.err)
}

package main

import "context"

// runGenerateCommand adapts runGenerate (the engine's raw-prompt command in
// generate.go) to the command table.
func runGenerateCommand(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return runGenerate(ctx, args, getenv, io.out, io.err)
}

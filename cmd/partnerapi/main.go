// Command partnerapi runs the banking, assistant and smart-home partner APIs
// as one binary, and provisions their data.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	lines := &processLines{w: os.Stderr}
	ctx, stop := signalContext(context.Background(), sigs, lines, os.Exit)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, lines: lines})
	if code := reportTo(err, lines); code != 0 {
		os.Exit(code)
	}
}

// report writes a command's error to w and returns the exit status. A
// command's -h is no failure: its flags go to w as the flag package prints
// them, and the status is 0, as `go doc flag` has it for ExitOnError, so a
// script or a reader checking `$?` after `partnerapi serve -h` sees success.
func report(err error, w io.Writer) int {
	return reportTo(err, &processLines{w: w})
}

// reportTo is report through the process's lines, in JSON once serve
// asked for JSON logs. Help text stays text: it is asked for at a terminal.
func reportTo(err error, lines *processLines) int {
	var help errHelp
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		fmt.Fprint(lines.w, help.Error())
		return 0
	}
	lines.print(slog.LevelError, err.Error(), "partnerapi failed", slog.String("err", err.Error()))
	return 1
}

// signalContext is the context of a command, ended by the first signal on
// sigs: serve then drains its listeners and streams for up to
// --shutdown-timeout. A second signal does not wait for that: it says so on
// w and calls exit(1) at once (an operator's second Ctrl-C, or a
// supervisor's repeated SIGTERM). stop releases the watcher.
func signalContext(parent context.Context, sigs <-chan os.Signal, lines *processLines, exit func(int)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case sig := <-sigs:
			lines.print(slog.LevelInfo, fmt.Sprintf("%v: shutting down (a second signal exits at once)", sig),
				"signal received: shutting down (a second signal exits at once)", slog.String("signal", sig.String()))
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			lines.print(slog.LevelWarn, fmt.Sprintf("%v again: exiting without waiting for the shutdown", sig),
				"signal received again: exiting without waiting for the shutdown", slog.String("signal", sig.String()))
			exit(1)
		case <-done:
		}
	}()
	return ctx, func() { once.Do(func() { close(done) }); cancel() }
}

// stdio bundles the standard streams so tests can run commands in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	// lines, when set, are the process's own lines on err (main's); serve
	// switches them to JSON with its logs.
	lines *processLines
}

type command func(ctx context.Context, args []string, getenv func(string) string, io stdio) error

// commands lists every subcommand; each lives in its own file.
func commands() map[string]command {
	return map[string]command{
		"serve":     runServe,
		"migrate":   runMigrate,
		"backup":    runBackup,
		"restore":   runRestore,
		"version":   runVersion,
		"banking":   runBanking,
		"assistant": runAssistant,
		"smarthome": runSmarthome,
		"models":    runModels,
		"generate":  runGenerateCommand,
		"bench":     runBench,
	}
}

const usage = `usage: partnerapi <command> [flags]

commands:
  serve       run the banking, assistant and smart-home APIs
  migrate     apply database migrations and exit
  backup      copy the data directory (SQLite snapshot and keys) while serve runs
  restore     put a backup into a data directory no serve holds
  banking     provision the banking API (tokens, organisations, certificates, cards...)
  assistant   provision the assistant API (client applications)
  smarthome   provision the smart-home API (agents, catalog)
  models      manage the models directory (pull, list, rm)
  generate    run the inference engine on a raw prompt
  bench       benchmarks (engine, banking, smarthome, assistant)
  version     print the version

Run 'partnerapi <command> -h' for a command's flags.`

func run(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(io.out, usage)
		return nil
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	return cmd(ctx, args[1:], getenv, io)
}

func runVersion(_ context.Context, _ []string, _ func(string) string, io stdio) error {
	fmt.Fprintln(io.out, "partnerapi", version)
	return nil
}

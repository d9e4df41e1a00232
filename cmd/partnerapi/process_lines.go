package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
)

// processLines writes the lines the process itself prints outside any
// command's logger: the signal watcher's "shutting down" and "again" lines
// and the final error of a failed command. They are plain text unless a
// serve asked for JSON logs (--log-format json): then they are JSON
// objects like every other line of its standard error, so that a CI job or
// a log shipper parsing that stream line by line as JSON does not fail on
// the very lines that say why the process stopped.
type processLines struct {
	w    io.Writer
	json atomic.Bool
}

// useJSON makes every later line a JSON object; serve calls it once its
// flags ask for JSON logs. Safe on a nil receiver (tests' stdio has none).
func (p *processLines) useJSON() {
	if p != nil {
		p.json.Store(true)
	}
}

// print writes msg, with text as the plain-text form ("partnerapi: " and
// the text), or in JSON the level, msg and attrs.
func (p *processLines) print(level slog.Level, text, msg string, attrs ...slog.Attr) {
	if !p.json.Load() {
		fmt.Fprintln(p.w, "partnerapi:", text)
		return
	}
	slog.New(slog.NewJSONHandler(p.w, nil)).LogAttrs(context.Background(), level, msg, attrs...)
}

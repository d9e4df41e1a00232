package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// readyFile is serve's --ready-file: a script that starts serve (a CI job,
// several at once on one machine, each on port 0) learns from it both that
// every listener accepts connections and which ports they were given,
// without parsing log lines or polling each listener's /healthz.
type readyFile struct {
	path string
}

// clear removes a file an earlier serve left at the path (one killed before
// it could remove its own), so that a script waiting for the file never
// reads the addresses of a server that is gone. It runs before anything is
// opened, and an empty path is no ready file.
func (r readyFile) clear() error {
	if r.path == "" {
		return nil
	}
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--ready-file: %w", err)
	}
	return nil
}

// write puts the bound addresses by service name (banking, assistant,
// smarthome, assistant-grpc, metrics, pprof, as serve's "listening" lines
// name them) and serve's pid into the file as one JSON object. It writes a
// temporary file beside it and renames it into place, so a reader that
// sees the file sees all of it.
func (r readyFile) write(addrs map[string]string) error {
	if r.path == "" {
		return nil
	}
	doc := map[string]any{"pid": os.Getpid()}
	for name, addr := range addrs {
		doc[name] = addr
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), "."+filepath.Base(r.path)+".*")
	if err != nil {
		return fmt.Errorf("--ready-file: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("--ready-file: %w", err)
	}
	return nil
}

// remove takes the file away once serve has stopped listening, so that a
// script that finds it can trust the addresses in it.
func (r readyFile) remove() {
	if r.path != "" {
		_ = os.Remove(r.path)
	}
}

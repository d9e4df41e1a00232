package modelstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"partnerapi/internal/dirsync"
)

// PullOptions configure one Pull.
type PullOptions struct {
	// Name is the model name (NAME.gguf); "" takes the source's.
	Name string
	// SHA256 is the expected digest (hex); "" trusts the server's published
	// sha256 (X-Linked-Etag / a 64-hex ETag), if any.
	SHA256 string
	// Token is sent as "Authorization: Bearer" to a Hugging Face source's
	// own host only, never to the host a redirect leads to.
	Token string
	// Force replaces an existing NAME.gguf.
	Force bool
	// Client makes the requests (nil: one with connect and header timeouts).
	// Pull sets its own redirect policy on a copy.
	Client *http.Client
	// Retries is how many consecutive failed attempts without progress are
	// retried (default 5); Backoff the first delay, doubled each time up to
	// 30s (default 1s).
	Retries int
	Backoff time.Duration
	// StallTimeout ends an attempt whose body sends nothing for this long
	// (default 60s), so a dead connection is retried instead of hanging.
	StallTimeout time.Duration
	// Progress is called after every chunk written (Total -1: unknown).
	Progress func(done, total int64)
	// Notify receives one-line human messages: resuming, restarting, retrying.
	Notify func(msg string)
}

// Result describes an installed model.
type Result struct {
	Name   string
	Path   string
	Size   int64
	SHA256 string
	// VerifiedBy names where the expected digest came from ("--sha256",
	// "X-Linked-Etag", "ETag"); "" when nothing was published to check
	// against and the digest is only computed.
	VerifiedBy string
	// Resumed is how many bytes came from an earlier interrupted download.
	Resumed int64
	// AlreadyPresent reports that NAME.gguf already had the wanted sha256
	// and nothing was downloaded.
	AlreadyPresent bool
	Info           Info
}

// Errors a caller may want to tell apart; every returned error wraps at most
// one of them and says in full what happened.
var (
	ErrExists    = errors.New("model exists")
	ErrChecksum  = errors.New("sha256 mismatch")
	ErrNotGGUF   = errors.New("not a GGUF model")
	ErrHTTP      = errors.New("download refused")
	ErrCancelled = errors.New("download interrupted")
)

// partMeta is NAME.gguf.part.json: what a later pull needs to resume safely.
type partMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`          // strong validator for If-Range
	LastModified string `json:"last_modified,omitempty"` // fallback validator
	Size         int64  `json:"size"`                    // total size, -1 unknown
	ServerSHA256 string `json:"server_sha256,omitempty"` // published digest
	SHA256From   string `json:"sha256_from,omitempty"`   // the header that published it
}

func (s *Store) readMeta(name string) (partMeta, error) {
	var m partMeta
	b, err := os.ReadFile(s.metaPath(name))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

func (s *Store) writeMeta(name string, m partMeta) error {
	b, _ := json.Marshal(m)
	tmp := s.metaPath(name) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.metaPath(name))
}

// Pull downloads src into the store as NAME.gguf: into .partial/NAME.gguf.part
// (resuming what an earlier pull left there), verifies its sha256 and that it
// parses as GGUF, then renames it into place atomically. Cancelling ctx
// leaves the part file for the next Pull to resume.
func (s *Store) Pull(ctx context.Context, src Source, opts PullOptions) (Result, error) {
	if src.URL == "" {
		if !src.HF {
			return Result{}, fmt.Errorf("%w: no URL", ErrSource)
		}
		client := opts.Client
		if client == nil {
			client = &http.Client{Transport: defaultTransport(), Timeout: 2 * time.Minute}
		}
		resolved, err := resolveHub(ctx, client, src, opts.Token)
		if err != nil {
			return Result{}, err
		}
		src = resolved
		if opts.Notify != nil {
			opts.Notify(fmt.Sprintf("picked %s from hf.co/%s", src.URL, src.Repo))
		}
	}
	name := opts.Name
	if name == "" {
		if src.Name == "" {
			return Result{}, fmt.Errorf("no model name: %w", src.NameErr)
		}
		name = src.Name
	}
	if err := ValidateName(name); err != nil {
		return Result{}, err
	}
	want := strings.ToLower(strings.TrimSpace(opts.SHA256))
	if want != "" && !isSHA256(want) {
		return Result{}, fmt.Errorf("--sha256: want 64 hex digits, got %q", opts.SHA256)
	}
	unlock, err := s.lock(name)
	if err != nil {
		return Result{}, err
	}
	defer unlock()

	final := s.modelPath(name)
	if _, err := os.Stat(final); err == nil && !opts.Force {
		if have := s.knownSHA256(name); want != "" && have == want {
			info, _ := Inspect(final)
			fi, _ := os.Stat(final)
			return Result{Name: name, Path: final, Size: fi.Size(), SHA256: have, VerifiedBy: "--sha256",
				AlreadyPresent: true, Info: info}, nil
		}
		return Result{}, fmt.Errorf("%w: %s already exists; pass --force to replace it or --name to pull under another name", ErrExists, final)
	}

	d, err := s.newDownload(name, src, opts)
	if err != nil {
		return Result{}, err
	}
	defer d.close()
	if err := d.run(ctx); err != nil {
		return Result{}, err
	}
	return s.install(name, d, want)
}

// install verifies the finished part file and renames it into place.
func (s *Store) install(name string, d *download, want string) (Result, error) {
	sum := hex.EncodeToString(d.hash.Sum(nil))
	res := Result{Name: name, Path: s.modelPath(name), Size: d.off, SHA256: sum, Resumed: d.resumed}
	switch {
	case want != "":
		res.VerifiedBy = "--sha256"
	case d.meta.ServerSHA256 != "":
		want, res.VerifiedBy = d.meta.ServerSHA256, d.meta.SHA256From
	}
	if want != "" && sum != want {
		d.discard()
		return Result{}, fmt.Errorf("%w: downloaded %d bytes with sha256 %s, but %s says %s; the partial download was deleted",
			ErrChecksum, d.off, sum, res.VerifiedBy, want)
	}
	if err := d.f.Sync(); err != nil {
		return Result{}, err
	}
	info, err := Inspect(d.part)
	if err != nil {
		hint := ""
		if head := d.head(); strings.HasPrefix(strings.TrimSpace(strings.ToLower(head)), "<") {
			hint = " (it looks like an HTML or XML page: check the URL)"
		}
		d.discard()
		return Result{}, fmt.Errorf("%w: %s%s: %v; the download was deleted", ErrNotGGUF, d.src.URL, hint, err)
	}
	res.Info = info
	// The old sidecar goes first: a crash between the steps then leaves a
	// model with no known digest rather than one with the wrong digest.
	if err := os.Remove(s.sidecarPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, err
	}
	if err := os.Rename(d.part, res.Path); err != nil {
		return Result{}, err
	}
	_ = os.Remove(s.metaPath(name))
	sidecar := fmt.Sprintf("%s  %s.gguf\n", sum, name)
	tmp := s.sidecarPath(name) + ".tmp"
	if err := os.WriteFile(tmp, []byte(sidecar), 0o644); err != nil {
		return Result{}, err
	}
	if err := os.Rename(tmp, s.sidecarPath(name)); err != nil {
		return Result{}, err
	}
	return res, dirsync.Sync(s.Dir)
}

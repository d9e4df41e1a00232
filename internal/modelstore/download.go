package modelstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// download is the state of one part file across attempts: its length (off)
// and the sha256 of exactly those bytes, so resumed bytes are hashed once.
type download struct {
	store   *Store
	name    string
	src     Source
	opts    PullOptions
	client  *http.Client
	part    string
	f       *os.File
	hash    hash.Hash
	off     int64
	resumed int64
	meta    partMeta
	// linked is the X-Linked-Etag/-Size a redirect carried in this attempt
	// (Hugging Face puts the LFS sha256 on the redirect, not the CDN reply).
	linkedSHA string
}

func (s *Store) newDownload(name string, src Source, opts PullOptions) (*download, error) {
	if opts.Retries <= 0 {
		opts.Retries = 5
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = 60 * time.Second
	}
	d := &download{store: s, name: name, src: src, opts: opts, part: s.partPath(name), hash: sha256.New()}
	d.client = d.newClient(opts.Client)
	meta, metaErr := s.readMeta(name)
	f, err := os.OpenFile(d.part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	d.f = f
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case fi.Size() == 0:
	case metaErr != nil || meta.URL != src.URL || (meta.ETag == "" && meta.LastModified == ""):
		// Bytes of another URL, or with no validator to ask the server
		// whether they are still the same file: not safe to continue.
		d.notify(fmt.Sprintf("discarding %d bytes of an earlier download that cannot be resumed safely", fi.Size()))
		if err := d.truncate(); err != nil {
			f.Close()
			return nil, err
		}
	default:
		// Re-hash what is already on disk so the digest covers the whole file.
		n, err := io.Copy(d.hash, f)
		if err != nil {
			f.Close()
			return nil, err
		}
		d.off, d.resumed, d.meta = n, n, meta
		d.notify(fmt.Sprintf("resuming at byte %d", n))
	}
	if d.meta.URL == "" {
		d.meta = partMeta{URL: src.URL, Size: -1}
	}
	return d, nil
}

// defaultTransport bounds connecting and waiting for headers; the body's
// pace is watched by the stall timer instead (a whole-request timeout would
// cut large downloads).
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// newClient copies base with a redirect policy that drops the token when a
// redirect leaves the source's host (Hugging Face sends LFS files to a CDN)
// and records the X-Linked-Etag the redirect carries.
func (d *download) newClient(base *http.Client) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	} else {
		c.Transport = defaultTransport()
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		if r := req.Response; r != nil {
			if sha := etagSHA256(r.Header.Get("X-Linked-Etag")); sha != "" {
				d.linkedSHA = sha
			}
		}
		return nil
	}
	return &c
}

func (d *download) notify(msg string) {
	if d.opts.Notify != nil {
		d.opts.Notify(msg)
	}
}

func (d *download) truncate() error {
	if err := d.f.Truncate(0); err != nil {
		return err
	}
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.hash.Reset()
	d.off, d.resumed = 0, 0
	return nil
}

// discard deletes the part file and its metadata (bad content: a retry must
// start from nothing).
func (d *download) discard() {
	d.f.Close()
	_ = os.Remove(d.part)
	_ = os.Remove(d.store.metaPath(d.name))
}

func (d *download) close() { d.f.Close() }

// head returns the first bytes of the part file, for error hints.
func (d *download) head() string {
	b := make([]byte, 64)
	n, _ := d.f.ReadAt(b, 0)
	return string(b[:n])
}

// run makes attempts until the file is complete, retrying transient
// failures with exponential backoff; a failure after progress starts the
// count again.
func (d *download) run(ctx context.Context) error {
	failures, restarts := 0, 0
	for {
		before := d.off
		done, err := d.attempt(ctx)
		if done {
			return nil
		}
		if ctx.Err() != nil {
			_ = d.f.Sync()
			return fmt.Errorf("%w: %d bytes kept in %s; run the same pull again to resume", ErrCancelled, d.off, d.part)
		}
		var perm permanentError
		if errors.As(err, &perm) {
			return perm.err
		}
		if err == nil { // the attempt asked for a clean restart
			if restarts++; restarts > 3 {
				return fmt.Errorf("%s: the server keeps changing the file; giving up", d.src.URL)
			}
			continue
		}
		if d.off > before {
			failures = 0
		}
		if failures++; failures > d.opts.Retries {
			_ = d.f.Sync()
			return fmt.Errorf("giving up after %d failed attempts (%d bytes kept in %s for the next pull): %w", failures, d.off, d.part, err)
		}
		delay := min(d.opts.Backoff<<(failures-1), 30*time.Second)
		delay += time.Duration(rand.Int64N(int64(delay)/5 + 1)) // jitter: retries of many clients do not align
		d.notify(fmt.Sprintf("retrying in %s: %v", delay.Round(time.Millisecond), err))
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
}

// permanentError marks a failure that retrying cannot fix.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }

// attempt makes one request and appends its body to the part file. It
// returns done when the file is complete, a nil error when the next attempt
// should start over at once, a permanentError when it must not be retried.
func (d *download) attempt(ctx context.Context) (done bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(actx, http.MethodGet, d.src.URL, nil)
	if err != nil {
		return false, permanentError{err}
	}
	req.Header.Set("User-Agent", "partnerapi-models-pull")
	if d.src.HF && d.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.opts.Token)
	}
	if d.off > 0 && d.meta.ETag == "" && d.meta.LastModified == "" {
		// Nothing to ask the server whether the file is still the same one.
		d.notify(fmt.Sprintf("the server gives no ETag or Last-Modified to resume safely; starting over at byte 0 instead of %d", d.off))
		if err := d.truncate(); err != nil {
			return false, permanentError{err}
		}
	}
	if d.off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", d.off))
		// If-Range: the server answers 206 only if the file is still the
		// one these bytes came from, else 200 with the whole new file.
		req.Header.Set("If-Range", cmpOr(d.meta.ETag, d.meta.LastModified))
	}
	d.linkedSHA = ""
	resp, err := d.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusOK:
		if d.off > 0 {
			d.notify("the server sent the whole file (it ignored the range or the file changed); starting over")
			if err := d.truncate(); err != nil {
				return false, permanentError{err}
			}
		}
		d.meta.Size = resp.ContentLength
	case http.StatusPartialContent:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != d.off {
			d.notify(fmt.Sprintf("the server answered range %q for byte %d; starting over", resp.Header.Get("Content-Range"), d.off))
			return false, d.truncate()
		}
		d.meta.Size = total
	case http.StatusRequestedRangeNotSatisfiable:
		if d.off == 0 {
			return false, permanentError{fmt.Errorf("%w: %s: 416 without a range", ErrHTTP, d.src.URL)}
		}
		// The part file already holds the whole file, unless the server's
		// file is now shorter than it.
		if _, total, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && total >= 0 && total != d.off {
			d.notify(fmt.Sprintf("the file on the server is now %d bytes, %d are downloaded; starting over", total, d.off))
			return false, d.truncate()
		}
		return true, nil
	default:
		return false, statusError(resp, d.src)
	}
	d.recordValidators(resp)
	if err := d.checkSpace(); err != nil {
		return false, permanentError{err}
	}
	if err := d.store.writeMeta(d.name, d.meta); err != nil {
		return false, permanentError{err}
	}
	if d.opts.Progress != nil {
		d.opts.Progress(d.off, d.meta.Size)
	}
	if err := d.copyBody(resp.Body, cancel); err != nil {
		if cause := context.Cause(actx); cause != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
			return false, cause
		}
		return false, err
	}
	if d.meta.Size >= 0 && d.off != d.meta.Size {
		return false, fmt.Errorf("connection closed at byte %d of %d", d.off, d.meta.Size)
	}
	return true, nil
}

// recordValidators keeps what the next attempt needs: the strong ETag or
// Last-Modified for If-Range and the published sha256.
func (d *download) recordValidators(resp *http.Response) {
	etag := resp.Header.Get("ETag")
	if strings.HasPrefix(etag, "W/") {
		etag = "" // weak validators are not allowed in If-Range
	}
	d.meta.ETag, d.meta.LastModified = etag, resp.Header.Get("Last-Modified")
	switch {
	case d.linkedSHA != "":
		d.meta.ServerSHA256, d.meta.SHA256From = d.linkedSHA, "X-Linked-Etag"
	case etagSHA256(resp.Header.Get("X-Linked-Etag")) != "":
		d.meta.ServerSHA256, d.meta.SHA256From = etagSHA256(resp.Header.Get("X-Linked-Etag")), "X-Linked-Etag"
	case etagSHA256(etag) != "":
		d.meta.ServerSHA256, d.meta.SHA256From = etagSHA256(etag), "ETag"
	case resp.StatusCode == http.StatusOK:
		d.meta.ServerSHA256, d.meta.SHA256From = "", ""
	}
}

// checkSpace fails at once when the file system cannot hold the rest of
// the file, instead of after downloading most of it.
func (d *download) checkSpace() error {
	if d.meta.Size <= d.off {
		return nil
	}
	free, ok := freeBytes(d.part)
	if !ok {
		return nil // unknown: let the writes tell
	}
	if need := uint64(d.meta.Size - d.off); need > free {
		return fmt.Errorf("%s needs %d more bytes but %s has %d free", d.src.URL, need, d.store.Dir, free)
	}
	return nil
}

var errStalled = errors.New("no data received for too long")

// copyBody appends body to the part file and the hash, reporting progress;
// a body that stalls longer than StallTimeout is cancelled.
func (d *download) copyBody(body io.Reader, cancel context.CancelCauseFunc) error {
	stall := time.AfterFunc(d.opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	buf := make([]byte, 256<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			stall.Reset(d.opts.StallTimeout)
			if _, err := d.f.Write(buf[:n]); err != nil {
				return permanentError{fmt.Errorf("writing %s: %w", d.part, err)}
			}
			d.hash.Write(buf[:n])
			d.off += int64(n)
			if d.opts.Progress != nil {
				d.opts.Progress(d.off, d.meta.Size)
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// statusError turns a refused request into a message that says what to do.
func statusError(resp *http.Response, src Source) error {
	where := src.URL
	if resp.Request != nil && resp.Request.URL != nil {
		where = resp.Request.URL.Redacted()
	}
	status := fmt.Sprintf("%s: %s", where, resp.Status)
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound:
		if src.HF {
			return permanentError{fmt.Errorf("%w: %s: no such file in %s (check the owner, repo and file name; names are case-sensitive)", ErrHTTP, status, src.Repo)}
		}
		return permanentError{fmt.Errorf("%w: %s: not found", ErrHTTP, status)}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "the server refused the request"
		if src.HF {
			hint = "the repository is private or gated, or does not exist; accept its licence on the Hub and set HF_TOKEN to a token with read access"
		}
		return permanentError{fmt.Errorf("%w: %s: %s", ErrHTTP, status, hint)}
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return errors.New(status) // transient: retried
	default:
		return permanentError{fmt.Errorf("%w: %s", ErrHTTP, status)}
	}
}

// parseContentRange reads a Content-Range of the bytes unit (RFC 9110
// §14.4): "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/*" as a 206 sends
// it, "bytes */TOTAL" as a 416 does; start is FIRST (-1 for "*") and total
// is TOTAL (-1 for "*"). Anything else is refused, positions that are not
// plain decimal digits or a range whose first byte lies past its last or
// whose last lies past the length included: a resumed download appends the
// body at FIRST and expects TOTAL bytes, so a header read leniently would
// splice the body in at an offset the server never meant.
func parseContentRange(v string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, ok = decimalPosition(tot); !ok {
			return 0, 0, false
		}
	}
	if rng == "*" {
		// An unsatisfied range must say how long the file is.
		return -1, total, total >= 0
	}
	first, last, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, ok1 := decimalPosition(first)
	end, ok2 := decimalPosition(last)
	if !ok1 || !ok2 || start > end || total >= 0 && end >= total {
		return 0, 0, false
	}
	return start, total, true
}

// decimalPosition reads a byte position of a Content-Range: one or more
// ASCII digits, nothing else (no sign, no base prefix, no spaces), that fit
// an int64.
func decimalPosition(s string) (int64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// etagSHA256 returns the sha256 an ETag carries (Hugging Face's LFS ETags
// are the file's sha256 in quotes), or "".
func etagSHA256(etag string) string {
	e := strings.ToLower(strings.Trim(strings.TrimPrefix(etag, "W/"), `"`))
	if isSHA256(e) {
		return e
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

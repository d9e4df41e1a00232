package web

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tlsReloadCheck is how often, at most, a handshake looks at the
// certificate files for a change.
var tlsReloadCheck = time.Second

// Config builds the listener's tls.Config. The certificate, its key and
// the client CA bundle are read again when their files change, so a
// renewed certificate (certbot, cert-manager, a short-lived internal CA)
// or a rotated CA bundle is served from the first handshake a second after
// the files are written, without a restart that would cut the streams
// under way. Files that do not load (a certificate written before its key,
// say) leave the previous ones in place, with one warning for that state
// of the files; the next change is tried again.
//
// With ClientCA the config requires and verifies a client certificate in
// the handshake: for the gRPC port, which has no answer of its own to give
// a connection without one. HTTP listeners take it in Listen instead.
func (t TLSFiles) Config(log *slog.Logger) (*tls.Config, error) {
	return t.config(log, tls.RequireAndVerifyClientCert)
}

// config is Config with the client-certificate mode used when ClientCA is
// set.
func (t TLSFiles) config(log *slog.Logger, mode tls.ClientAuthType) (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" {
		return nil, errors.New("both --tls-cert and --tls-key are needed for HTTPS")
	}
	cfg, err := t.load(mode)
	if err != nil {
		return nil, err
	}
	r := &reloadingTLS{files: t, mode: mode, log: log, seen: t.stamp()}
	r.cur.Store(cfg)
	r.next.Store(time.Now().Add(tlsReloadCheck).UnixNano())
	// The outer config's session ticket keys are the ones every returned
	// config uses (crypto/tls), so resumption survives a reload.
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: r.forClient}, nil
}

// load reads the files into a config of their own.
func (t TLSFiles) load(mode tls.ClientAuthType) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("tls key pair: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if t.ClientCA != "" {
		pem, err := os.ReadFile(t.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("tls client ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls client ca %s: no PEM certificates", t.ClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = mode
	}
	return cfg, nil
}

// stamp is the files' modification times and sizes: a change of any of
// them is a change of the files.
func (t TLSFiles) stamp() string {
	var b strings.Builder
	for _, name := range []string{t.Cert, t.Key, t.ClientCA} {
		if name == "" {
			continue
		}
		if st, err := os.Stat(name); err == nil {
			fmt.Fprintf(&b, "%d/%d;", st.ModTime().UnixNano(), st.Size())
		} else {
			b.WriteString("missing;")
		}
	}
	return b.String()
}

// reloadingTLS is the config a listener's handshakes take, read again from
// its files when they change.
type reloadingTLS struct {
	files TLSFiles
	mode  tls.ClientAuthType
	log   *slog.Logger
	cur   atomic.Pointer[tls.Config]
	next  atomic.Int64 // when a handshake next looks at the files, in Unix ns

	mu   sync.Mutex // one reload at a time
	seen string     // the files' stamp behind cur, or the last one that failed
}

// forClient is the GetConfigForClient of the listener's config. It returns
// a copy, because a caller may change it (gRPC adds its protocol to it).
func (r *reloadingTLS) forClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	now := time.Now().UnixNano()
	if next := r.next.Load(); now >= next && r.next.CompareAndSwap(next, now+int64(tlsReloadCheck)) {
		r.reload()
	}
	return r.cur.Load().Clone(), nil
}

func (r *reloadingTLS) reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp := r.files.stamp()
	if stamp == r.seen {
		return
	}
	r.seen = stamp
	cfg, err := r.files.load(r.mode)
	if err != nil {
		r.log.Warn("tls: the certificate files changed and do not load; the previous certificate is still served", "err", err)
		return
	}
	r.cur.Store(cfg)
	attrs := []any{"cert", r.files.Cert}
	if leaf := cfg.Certificates[0].Leaf; leaf != nil {
		attrs = append(attrs, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	r.log.Info("tls: certificate files reloaded", attrs...)
}

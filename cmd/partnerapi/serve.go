package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"partnerapi/internal/background"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/web"
)

// deps is what an API module may use to build itself.
type deps struct {
	db        *sqldb.DB
	log       *slog.Logger
	metrics   *web.Metrics
	dataDir   string
	modelsDir string
	tls       web.TLSFiles
	// listenAddr is the address an API's listener is bound to, known once
	// serve has opened it: sidecars, which start after every listener is
	// open, may read it (build may not).
	listenAddr func(api string) string
	// maxConnections and connMetrics cap the connections of listeners a
	// module opens itself (the gRPC port) as serve caps its HTTP ones.
	maxConnections int
	connMetrics    *web.ConnMetrics
}

// sidecar is something an API runs beside its HTTP listener: a gRPC
// listener, an outbox dispatcher, a status processor. serve blocks until
// stop is called.
type sidecar struct {
	name  string
	serve func() error
	stop  func(ctx context.Context) error
	// listener marks a sidecar that serves clients (the gRPC listener): on
	// shutdown it stops together with the HTTP listeners, before the
	// sidecars that work for them (the webhook outbox, the MQTT gate).
	// stop must also be safe on a sidecar whose serve never ran, with an
	// ended ctx: a failed start-up releases what was built that way.
	listener bool
	// addr is the address a listener sidecar is bound to, which
	// --ready-file names under the sidecar's name.
	addr string
}

// built is an API ready to serve.
type built struct {
	api      web.API
	sidecars []sidecar
	close    func()
}

// apiModule is one of the three APIs as the binary wires it. Each lives in
// its own file (banking.go, assistant.go, smarthome.go), so the APIs grow
// without touching each other or this file.
type apiModule interface {
	name() string
	defaultAddr() string
	registerFlags(fs *flag.FlagSet)
	migrate(ctx context.Context, db *sqldb.DB) error
	build(ctx context.Context, d deps) (built, error)
}

func modules() []apiModule {
	return []apiModule{&bankingModule{}, &assistantModule{}, &smarthomeModule{}}
}

type serveConfig struct {
	store           storeConfig
	addrs           map[string]*string
	modelsDir       string
	tls             web.TLSFiles
	logFormat       string
	logFlush        string
	only            string
	shutdownTimeout string
	gcPercent       string
	metricsAddr     string
	metricsTLS      string
	pprofAddr       string
	trustedProxies  string
	maxConnections  int
	readyFile       string
}

// serveFlags builds the flag set of serve; tests use it too.
func serveFlags(cfg *serveConfig, mods []apiModule) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.store.register(fs)
	cfg.addrs = map[string]*string{}
	for _, m := range mods {
		cfg.addrs[m.name()] = fs.String(m.name()+"-addr", m.defaultAddr(), "listen address of the "+m.name()+" API")
		m.registerFlags(fs)
	}
	fs.StringVar(&cfg.modelsDir, "models-dir", "./models", "directory of GGUF models served by the assistant")
	fs.StringVar(&cfg.tls.Cert, "tls-cert", "", "PEM certificate: serve HTTPS")
	fs.StringVar(&cfg.tls.Key, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&cfg.tls.ClientCA, "tls-client-ca", "", "PEM CA bundle: require client certificates signed by it")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&cfg.logFlush, "log-flush-interval", "100ms", "longest time a log line waits in the log buffer (warnings and errors never wait); 0 writes every line at once")
	fs.StringVar(&cfg.only, "only", "", "comma-separated subset of banking,assistant,smarthome to run")
	fs.StringVar(&cfg.shutdownTimeout, "shutdown-timeout", "30s", "how long in-flight requests and streams may finish on SIGINT/SIGTERM")
	registerGCFlag(fs, &cfg.gcPercent) // gc.go
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "listen address of /metrics alone (every API's series), which the API listeners then answer 404; off: served nowhere; empty: on every API listener")
	fs.StringVar(&cfg.metricsTLS, "metrics-tls", "auto", "TLS of the --metrics-addr listener: auto, HTTPS with --tls-cert's certificate when it is set (no client certificate asked), else plain HTTP; off: plain HTTP always")
	fs.StringVar(&cfg.pprofAddr, "pprof-addr", "", "listen address of the Go runtime's profiles under /debug/pprof/ (heap, goroutine, profile, trace, ...) for go tool pprof; TLS as --metrics-tls says; a non-loopback address needs TLS; empty: off")
	fs.IntVar(&cfg.maxConnections, "max-connections", 4096, "most connections each HTTP listener holds open; at the cap the longest-idle keep-alive connection is closed, or with none idle new ones wait in the backlog; 0: no cap")
	fs.StringVar(&cfg.readyFile, "ready-file", "", "file to write, once every listener accepts connections, as JSON with the bound address of each (port 0 gets a free port) and serve's pid; removed at start and on exit")
	fs.StringVar(&cfg.trustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes or addresses of reverse proxies whose X-Forwarded-For (or X-Real-IP, or Forwarded) names the client; empty: none")
	return fs
}

func selectModules(mods []apiModule, only string) ([]apiModule, error) {
	if only == "" {
		return mods, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []apiModule
	for _, m := range mods {
		if want[m.name()] {
			out = append(out, m)
			delete(want, m.name())
		}
	}
	for n := range want {
		return nil, fmt.Errorf("--only: unknown service %q (want banking, assistant, smarthome)", n)
	}
	return out, nil
}

func runServe(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return serve(ctx, args, getenv, io, nil)
}

// serve runs the listeners until ctx ends. ready, when set, receives the
// bound addresses by service name once every listener is up (tests use it
// with port 0).
func serve(ctx context.Context, args []string, getenv func(string) string, io stdio, ready func(map[string]string)) error {
	var cfg serveConfig
	mods := modules()
	fs := serveFlags(&cfg, mods)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	flush, err := durationFlag("log-flush-interval", cfg.logFlush)
	if err != nil {
		return err
	}
	log, logBuf, err := newServeLogger(cfg.logFormat, io.err, flush)
	if err != nil {
		return err
	}
	if cfg.logFormat == "json" {
		io.lines.useJSON()
	}
	if logBuf != nil {
		defer logBuf.Close()
	}
	readiness := readyFile{path: cfg.readyFile} // readyfile.go
	if err := readiness.clear(); err != nil {
		return err
	}
	if cfg.maxConnections < 0 {
		return fmt.Errorf("--max-connections: %d is negative (0 means no cap)", cfg.maxConnections)
	}
	metricsTLS, err := metricsTLSFiles(cfg.metricsTLS, cfg.tls)
	if err != nil {
		return err
	}
	if cfg.pprofAddr != "" {
		if err := pprofListenCheck(cfg.pprofAddr, metricsTLS.Enabled()); err != nil { // pprof.go
			return err
		}
	}
	grace, err := durationFlag("shutdown-timeout", cfg.shutdownTimeout)
	if err != nil {
		return err
	}
	proxies, err := web.ParseTrustedProxies(cfg.trustedProxies)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	mods, err = selectModules(mods, cfg.only)
	if err != nil {
		return err
	}
	engine := false
	for _, m := range mods {
		engine = engine || m.name() == "assistant"
	}
	if err := applyGCPercent(cfg.gcPercent, engine, getenv); err != nil {
		return err
	}
	db, err := cfg.store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	lock := lockDataDir // datalock.go
	if cfg.store.DatabaseURL != "" {
		lock = shareDataDir
	}
	release, err := lock(cfg.store.DataDir)
	if err != nil {
		return err
	}
	defer release()
	if cfg.store.DatabaseURL == "" {
		warnReadableDatabase(log, cfg.store.DataDir) // datalock.go
	}
	metrics := web.NewMetrics(version)
	connMetrics := metrics.NewConnMetrics()
	registerPoolMetrics(metrics, db)
	// SQLite's checkpointer reports as the other background workers do: a
	// WARN line when its checkpoints stop answering within their bound (a
	// hung disk, reads that hold every reader connection), an INFO line
	// when they work again, and its partnerapi_background_* series.
	sqlite.ReportCheckpoints(db, background.NewMetrics(metrics.Registry).Worker("sqlite-checkpoint", log).Report)
	// Every listener shares one platform: with --metrics-addr set, none of
	// the API listeners serves /metrics, which the partners reach, and
	// the registry gets a listener of its own below (or, off, none).
	platform := web.Platform{Log: log, Metrics: metrics, MetricsElsewhere: cfg.metricsAddr != "", TrustedProxies: proxies}
	// bound is written while the listeners open, before any sidecar
	// goroutine starts, and only read after.
	bound := map[string]string{}
	d := deps{db: db, log: log, metrics: metrics, dataDir: cfg.store.DataDir, modelsDir: cfg.modelsDir, tls: cfg.tls,
		listenAddr: func(api string) string { return bound[api] }, maxConnections: cfg.maxConnections, connMetrics: connMetrics}

	var listeners []*web.Listener
	var sidecars []sidecar
	var closers []func()
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer cleanup()
	// abandon releases, on a failed start-up, what the modules before the
	// failing one bound: their listeners and their sidecars' (the gRPC
	// port), none of which has served yet.
	abandon := func(err error) error {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		for _, l := range listeners {
			_ = l.Shutdown(ended)
		}
		for _, s := range sidecars {
			_ = s.stop(ended)
		}
		return err
	}
	for _, m := range mods {
		if err := m.migrate(ctx, db); err != nil {
			return abandon(fmt.Errorf("%s: migrate: %w", m.name(), err))
		}
		b, err := m.build(ctx, d)
		if err != nil {
			return abandon(fmt.Errorf("%s: %w", m.name(), err))
		}
		if b.close != nil {
			closers = append(closers, b.close)
		}
		sidecars = append(sidecars, b.sidecars...)
		tlsFiles := cfg.tls
		tlsFiles.BrowserPaths = b.api.BrowserPaths
		ln, err := web.Listen(m.name(), *cfg.addrs[m.name()], b.api.BuildOn(platform), tlsFiles, log)
		if err != nil {
			return abandon(err)
		}
		ln.LimitConnections(cfg.maxConnections, connMetrics)
		listeners = append(listeners, ln)
		bound[m.name()] = ln.Addr().String()
	}
	if cfg.metricsAddr != "" && cfg.metricsAddr != "off" {
		// As one of the listeners it stops at once with the others, and
		// a failed bind releases the ports bound before it.
		ln, err := web.Listen("metrics", cfg.metricsAddr, metrics.StandaloneHandler(), metricsTLS, log)
		if err != nil {
			return abandon(err)
		}
		ln.LimitConnections(cfg.maxConnections, connMetrics)
		listeners = append(listeners, ln)
	}
	if cfg.pprofAddr != "" {
		ln, err := listenPprof(cfg.pprofAddr, metricsTLS, log)
		if err != nil {
			return abandon(err)
		}
		ln.LimitConnections(cfg.maxConnections, connMetrics)
		listeners = append(listeners, ln)
	}

	addrs := map[string]string{}
	errc := make(chan error, len(listeners)+len(sidecars)+1) // +1: the ready file's
	var wg sync.WaitGroup
	for _, l := range listeners {
		addrs[l.Name] = l.Addr().String()
		log.Info("listening", "service", l.Name, "addr", l.Addr().String(), "tls", l.TLS())
		wg.Add(1)
		go func(l *web.Listener) {
			defer wg.Done()
			if err := l.Serve(); err != nil {
				errc <- fmt.Errorf("%s: %w", l.Name, err)
			}
		}(l)
	}
	for _, s := range sidecars {
		if s.addr != "" {
			addrs[s.name] = s.addr
		}
		wg.Add(1)
		go func(s sidecar) {
			defer wg.Done()
			if err := s.serve(); err != nil {
				errc <- fmt.Errorf("%s: %w", s.name, err)
			}
		}(s)
	}
	if logBuf != nil {
		// The start-up lines (addresses, models) are on the stream before
		// anyone is told the server is up.
		_ = logBuf.Flush()
	}
	if err := readiness.write(addrs); err != nil {
		// Stop as a failed start does, since the script waiting for
		// the file would wait in vain.
		errc <- err
	} else {
		defer readiness.remove()
	}
	if ready != nil {
		ready(addrs)
	}

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "grace", grace.String())
	case runErr = <-errc:
		log.Error("service failed, shutting down", "err", runErr)
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Every listener stops accepting at once and drains in parallel (one
	// listener's long streams must not keep the others open to new
	// clients); then the sidecars that serve them stop, the webhook outbox
	// and the MQTT gate, once no request can use them any more.
	var (
		shutdownMu  sync.Mutex
		shutdownErr error
		phase       sync.WaitGroup
	)
	failed := func(err error) {
		shutdownMu.Lock()
		shutdownErr = errors.Join(shutdownErr, err)
		shutdownMu.Unlock()
	}
	stopSidecars := func(listenersToo bool) {
		for _, s := range sidecars {
			if s.listener != listenersToo {
				continue
			}
			phase.Add(1)
			go func(s sidecar) {
				defer phase.Done()
				if err := s.stop(sctx); err != nil {
					failed(fmt.Errorf("%s: stop: %w", s.name, err))
				}
			}(s)
		}
	}
	for _, l := range listeners {
		phase.Add(1)
		go func(l *web.Listener) {
			defer phase.Done()
			if err := l.Shutdown(sctx); err != nil {
				failed(fmt.Errorf("%s: shutdown: %w", l.Name, err))
			}
		}(l)
	}
	stopSidecars(true)
	phase.Wait()
	stopSidecars(false)
	phase.Wait()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace + time.Second):
		log.Warn("some services did not stop in time")
	}
	if runErr != nil {
		return runErr
	}
	if shutdownErr != nil {
		log.Warn("shutdown", "err", shutdownErr)
	}
	return nil
}

// metricsTLSFiles are the certificate files of the --metrics-addr listener
// by --metrics-tls. auto serves HTTPS with the API listeners' certificate
// files, read again when they change as theirs are, since an operator who
// serves the APIs over TLS expects the series (which name every route and
// model) not to cross the network in the clear. It never asks for a
// client certificate: --tls-client-ca names the partners' CA, and a
// scraper such as Prometheus usually has none. off is plain HTTP always,
// for a scraper on loopback that has no CA to check the certificate with.
func metricsTLSFiles(mode string, api web.TLSFiles) (web.TLSFiles, error) {
	switch mode {
	case "auto":
		return web.TLSFiles{Cert: api.Cert, Key: api.Key}, nil
	case "off":
		return web.TLSFiles{}, nil
	}
	return web.TLSFiles{}, fmt.Errorf("--metrics-tls: %q is neither auto nor off", mode)
}

// registerPoolMetrics exports the database pools' statistics (go_sql_*:
// open, in-use and idle connections, waits, closes) by pool: "write" and
// "read" on SQLite, one "pool" on PostgreSQL. A process that runs for
// weeks shows a leaked connection (a transaction or rows never closed) as
// in-use connections that never come back down.
func registerPoolMetrics(m *web.Metrics, db *sqldb.DB) {
	if c := db.Checkpoints; c != nil {
		m.Registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "partnerapi_sqlite_wal_frames",
				Help: "Size of SQLite's WAL in pages at the last checkpoint (every 250 ms); one that only grows will fill the disk."},
				func() float64 { return float64(c.WALFrames.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "partnerapi_sqlite_checkpoint_failures_total",
				Help: "SQLite WAL checkpoints that failed."},
				func() float64 { return float64(c.Failures.Load()) }))
	}
	if db.R == db.W {
		m.Registry.MustRegister(collectors.NewDBStatsCollector(db.W, "pool"))
		return
	}
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db.W, "write"), collectors.NewDBStatsCollector(db.R, "read"))
}

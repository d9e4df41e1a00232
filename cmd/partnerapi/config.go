package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/web"
)

// storeConfig is what every command that touches data needs.
type storeConfig struct {
	DataDir     string
	DatabaseURL string
}

// register adds the store flags to fs.
func (c *storeConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", "./data", "directory of the embedded SQLite database and of the files beside it (keys, kept-bill journals), which --database-url uses too")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... switches every store to PostgreSQL")
}

// open opens the configured database.
func (c *storeConfig) open(ctx context.Context) (*sqldb.DB, error) {
	if c.DatabaseURL != "" {
		if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
			return nil, fmt.Errorf("--database-url must start with postgres://, got %q", redactURL(c.DatabaseURL))
		}
		db, err := postgres.Open(ctx, c.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("database %s: %w", redactURL(c.DatabaseURL), err)
		}
		return db, nil
	}
	return sqlite.Open(ctx, c.DataDir)
}

// redactURL hides the passwords of a URL, or of a key=value connection
// string, before it reaches a log or an error message. pgx reads one from
// the URL's user information (after its first colon, up to the last @)
// and from the query parameters password and sslpassword; a key=value
// string may hold one anywhere. So the user information's password and
// every query parameter whose name says password become xxxxx, and text
// net/url does not read as a URL is not shown when it may hold a password.
func redactURL(s string) string {
	u, err := url.Parse(s)
	// pgx reads a URL as libpq does, where # starts no fragment: in
	// postgres://user:#secret@db net/url sees the password as a fragment,
	// so text with a # is shown as no URL is.
	if err != nil || u.Scheme == "" || u.Opaque != "" || strings.Contains(s, "#") {
		if strings.ContainsAny(s, "@=") {
			if scheme, _, ok := strings.Cut(s, "://"); ok && !strings.ContainsAny(scheme, "@=") {
				return scheme + "://(not shown: it may hold a password)"
			}
			return "(not shown: it may hold a password)"
		}
		return s
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, p := range params {
			key, _, _ := strings.Cut(p, "=")
			if name, err := url.QueryUnescape(key); err != nil || strings.Contains(strings.ToLower(name), "password") {
				params[i] = key + "=xxxxx"
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.String()
}

// parseFlags parses args, then fills every flag not given on the command
// line from the environment variable PARTNERAPI_<FLAG> (upper case, dashes
// as underscores). Command-line flags win over the environment.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp{fs}
		}
		return redactFlagError(fs, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "PARTNERAPI_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", env, e)
			}
		}
	})
	return err
}

// redactedValue is a flag whose values may carry credentials (a URL's
// user, password or query): it quotes a value the way its own errors do.
type redactedValue interface {
	flag.Value
	Redact(value string) string
}

// redactFlagError rewrites the flag package's `invalid value "V" for flag
// -NAME: ...` so that V is quoted as NAME's Value would quote it, for a
// flag that is a redactedValue. The flag package quotes the raw value
// whole, and the error reaches the terminal or the service's log.
func redactFlagError(fs *flag.FlagSet, err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "invalid value ")
	if !ok {
		return err
	}
	quoted, perr := strconv.QuotedPrefix(rest)
	if perr != nil {
		return err
	}
	value, _ := strconv.Unquote(quoted)
	name, _, _ := strings.Cut(strings.TrimPrefix(rest[len(quoted):], " for flag -"), ":")
	f := fs.Lookup(name)
	if f == nil {
		return err
	}
	r, ok := f.Value.(redactedValue)
	if !ok {
		return err
	}
	return errors.New("invalid value " + strconv.Quote(r.Redact(value)) + rest[len(quoted):])
}

// errHelp carries a flag set whose usage the caller prints.
type errHelp struct{ fs *flag.FlagSet }

func (e errHelp) Error() string {
	var b strings.Builder
	e.fs.SetOutput(&b)
	fmt.Fprintf(&b, "usage of %s:\n", e.fs.Name())
	e.fs.PrintDefaults()
	return b.String()
}

// newLogger builds the process logger in text or JSON.
func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "", "text":
		// slog's text format, with the platform's fast access lines.
		return slog.New(web.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
}

// newServeLogger is newLogger for serve: with flush > 0 the lines go
// through a web.LogBuffer (returned, nil otherwise) that writes them to w
// at most flush apart, and at once for warnings and errors, instead of one
// write per access line. serve flushes it once its listeners are up and
// closes it on its way out.
func newServeLogger(format string, w io.Writer, flush time.Duration) (*slog.Logger, *web.LogBuffer, error) {
	if flush < 0 {
		return nil, nil, fmt.Errorf("--log-flush-interval must not be negative, got %s", flush)
	}
	if flush == 0 {
		log, err := newLogger(format, w)
		return log, nil, err
	}
	buf := web.NewLogBuffer(w, flush, 64<<10)
	log, err := newLogger(format, buf)
	if err != nil {
		_ = buf.Close()
		return nil, nil, err
	}
	return slog.New(web.NewFlushingHandler(log.Handler(), buf)), buf, nil
}

// durationFlag parses a duration flag value; kept here so commands share one
// spelling of errors.
func durationFlag(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", name, err)
	}
	return d, nil
}

// checkTokenTTL checks a token lifetime flag: whole seconds from 1s to 24h,
// since a token answer states the lifetime in seconds.
func checkTokenTTL(flagName string, d time.Duration) error {
	if d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
		return fmt.Errorf("%s must be whole seconds from 1s to 24h, got %s", flagName, d)
	}
	return nil
}

// Package sqlite opens the embedded default database: one SQLite file in the
// data dir through the cgo-free modernc.org/sqlite driver.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"partnerapi/internal/background"
	"partnerapi/internal/sqldb"
)

// FileName is the database file inside the data dir.
const FileName = "partnerapi.db"

// Open opens (creating if needed) the database in dataDir. WAL lets readers
// run beside the single writer and lets provisioning commands work on the same
// file while `serve` runs; the busy timeout makes a second process wait for
// the write lock instead of failing; IMMEDIATE transactions take the write
// lock up front, so two writers never deadlock upgrading read locks.
func Open(ctx context.Context, dataDir string) (*sqldb.DB, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	probe := filepath.Join(dataDir, ".write-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return nil, fmt.Errorf("data dir %s is not writable: %w", dataDir, err)
	}
	_ = os.Remove(probe)
	// The database holds what the key files beside it protect (sealed
	// webhook secrets, credential hashes, partners' documents), so it is
	// made 0600 as they are, whatever the data directory's mode: SQLite
	// would create it under the umask, 0644, readable by every local user
	// when the operator made the directory 0755. SQLite gives its WAL and
	// shared-memory files the database file's mode. An empty file is an
	// empty database to SQLite; an existing file keeps its mode.
	path := filepath.Join(dataDir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	return OpenFile(ctx, path)
}

// OpenFile opens the database at path.
func OpenFile(ctx context.Context, path string) (*sqldb.DB, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", "busy_timeout(10000)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	// The writer never checkpoints (wal_autocheckpoint 0): the checkpointer
	// below does it on a reader connection, so no commit pays for copying
	// the WAL back into the database.
	w, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode()+"&_pragma=wal_autocheckpoint%280%29&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	// Keep all eight open: database/sql keeps only two idle by default, so
	// under concurrent reads it would open and close connections (each
	// re-running the pragmas and losing its prepared statements) all the time.
	r.SetMaxIdleConns(8)
	db := &sqldb.DB{Dialect: sqldb.SQLite, W: w, R: r}
	if err := w.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.Checkpoints = &sqldb.CheckpointStats{}
	c := &checkpointer{r: r, stats: db.Checkpoints, bound: checkpointBound}
	checkpointers.Store(db.Checkpoints, c)
	stop := c.start()
	db.BeforeClose = func() {
		stop()
		checkpointers.Delete(db.Checkpoints)
	}
	return db, nil
}

// checkpointEvery is how often the checkpointer copies committed WAL
// frames into the database file.
const checkpointEvery = 250 * time.Millisecond

// restartFrames is the WAL size (frames of one page) past which a
// checkpoint is RESTART: it takes the write lock for the few frames the
// PASSIVE one before it left and waits for readers to leave the WAL, so
// that the next commit writes it from its start again. Without it the WAL
// never restarts under steady writes (a commit always lands between a
// PASSIVE checkpoint and the next transaction) and grew to 64 MB in the
// banking bench; with 2048 it stays near 20 MB at 12 000 documents/s, and
// the bench's CPU per document was no worse (116/106/108 µs against
// 127/96/112 µs with 16384).
const restartFrames = 2048

// checkpointBound bounds one checkpoint. A PASSIVE one takes
// milliseconds; a RESTART one may wait out the busy timeout (10 s) for the
// writer's lock and the readers. What has no bound of its own is the wait
// for a reader connection: a database whose reads hang (a disk that stopped
// answering) or that other users hold keeps all eight busy, and the
// checkpointer, and with it Close, waited for one for good.
const checkpointBound = 15 * time.Second

// checkpointer checkpoints the WAL from a reader connection on a timer, in
// place of SQLite's automatic checkpoint, which runs inside the commit that
// crosses 1000 pages and so made every writer wait for it. A PASSIVE
// checkpoint never blocks the writer; pages the writer changed many times
// between two ticks are copied once.
type checkpointer struct {
	r     *sql.DB
	stats *sqldb.CheckpointStats
	bound time.Duration
	// report, when set (ReportCheckpoints), hears the outcome of each
	// tick's checkpoints: a background.Worker's Report.
	report atomic.Pointer[func(error)]
	// began, when a test sets it, is called with each checkpoint's bounded
	// context before the checkpoint asks for a connection, so that the
	// test can check the deadline the checkpoint was given rather than the
	// wall time it took, which a loaded machine stretches.
	began func(context.Context)
}

// checkpointers are the running checkpointers by their database's stats,
// so that serve can attach a report to the one OpenFile started.
var checkpointers sync.Map // *sqldb.CheckpointStats → *checkpointer

// ReportCheckpoints sends the outcome of each of db's checkpoints to
// report (a background.Worker's Report): nil, or an error that wraps
// context.DeadlineExceeded when the database did not answer within the
// checkpoint's bound. A database that is not SQLite's has no checkpointer,
// and report is never called.
func ReportCheckpoints(db *sqldb.DB, report func(error)) {
	if db.Checkpoints == nil {
		return
	}
	if c, ok := checkpointers.Load(db.Checkpoints); ok {
		c.(*checkpointer).report.Store(&report)
	}
}

// start runs the checkpointer until the function it returns is called,
// which runs a last checkpoint.
func (c *checkpointer) start() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				_, err := c.checkpoint("PASSIVE")
				c.reportRun(err)
				return
			case <-t.C:
				frames, err := c.checkpoint("PASSIVE")
				if err == nil && frames > restartFrames {
					_, err = c.checkpoint("RESTART")
				}
				c.reportRun(err)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
		})
	}
}

func (c *checkpointer) reportRun(err error) {
	if report := c.report.Load(); report != nil {
		(*report)(err)
	}
}

// checkpoint runs one checkpoint of mode within the checkpointer's bound
// and returns the WAL's size in frames; a failure (a busy database, or one
// that did not answer in time) waits for the next tick, and is counted in
// stats.
func (c *checkpointer) checkpoint(mode string) (int, error) {
	var busy, frames, copied int
	err := background.Bounded(context.Background(), c.bound, func(ctx context.Context) error {
		if c.began != nil {
			c.began(ctx)
		}
		return c.r.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied)
	})
	if err != nil {
		c.stats.Failures.Add(1)
		return 0, fmt.Errorf("sqlite checkpoint (%s): %w", mode, err)
	}
	c.stats.WALFrames.Store(int64(frames))
	return frames, nil
}

// Snapshot writes a transactionally consistent copy of the database at
// path into out (which must not exist) with VACUUM INTO, while other
// processes go on reading and writing it: the copy is what one read
// transaction sees, every commit before it and none after. The copy holds
// no WAL of its own and is synced before Snapshot returns, so it survives
// a crash from that moment on. A database that does not exist is an error
// rather than an empty copy.
func Snapshot(ctx context.Context, path, out string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database to copy: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout%2810000%29")
	if err != nil {
		return err
	}
	defer db.Close()
	// VACUUM INTO takes an empty file as it takes a missing one: made
	// first, the copy has the owner-only mode of the database it copies.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", out); err != nil {
		_ = os.Remove(out)
		return fmt.Errorf("copy %s: %w", path, err)
	}
	f, err = os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Check runs SQLite's integrity check on the database at path, opened
// read-only, and returns the migrations it records by domain (the
// highest version of each), so a restore can tell a partnerapi database
// from another file and say what it holds.
func Check(ctx context.Context, path string) (map[string]int, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&verdict); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if verdict != "ok" {
		return nil, fmt.Errorf("%s fails SQLite's integrity check: %s", path, verdict)
	}
	rows, err := db.QueryContext(ctx, "SELECT domain, MAX(version) FROM schema_migrations GROUP BY domain")
	if err != nil {
		return nil, fmt.Errorf("%s is not a partnerapi database: %w", path, err)
	}
	defer rows.Close()
	versions := map[string]int{}
	for rows.Next() {
		var domain string
		var v int
		if err := rows.Scan(&domain, &v); err != nil {
			return nil, err
		}
		versions[domain] = v
	}
	return versions, rows.Err()
}

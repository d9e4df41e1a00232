package bankingsql

import (
	"errors"
	"sync"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// readCacheTTL bounds how long a token or account row read from the
// database is reused. Every API call authenticates and every payment checks
// its account's owner; the two lookups were a third of a payment call's CPU,
// and a second of reuse removes them under load. A revocation through any
// IdentityStore of this process takes effect at once (the entry is dropped);
// one made by another process (a CLI command, a second server on PostgreSQL)
// takes effect within this TTL. Expiry is exact either way: Identity checks
// the cached row's expiry against its clock on every call. Accounts and
// organisations are never updated or deleted by the stores, only added, and
// unknown keys are not cached, so a row added elsewhere works at once.
const readCacheTTL = time.Second

// readCacheMax caps the entries of one cache; a full cache is emptied, not
// evicted entry by entry, because within a second it refills with the live
// rows.
const readCacheMax = 10_000

// readCache is a TTL cache of rows by key, shared by every IdentityStore on
// one database, so a change through one store is seen by the others. A hit
// takes no lock: every API call looks up its token and every create its
// account, and on two cores the one mutex every lookup took moved its cache
// line between them twice per lookup. Stores and forgets still serialise
// on mu, so a row read before a forget is never cached after it.
type readCache[V any] struct {
	entries sync.Map // key → *readEntry[V]

	mu sync.Mutex
	n  int // keys stored since the cache was last emptied
	// gen counts forgets: a row read before a forget must not be cached
	// after it, or a revoked token could come back for a TTL.
	gen uint64
	// reads are the reads in flight, by key: when an entry is missing or
	// has expired, the lookups that arrive while one of them reads the row
	// wait for that read instead of each asking the database. Under load
	// every request in flight missed together each time the TTL ended: at
	// 64 connections on PostgreSQL, tens of account, organisation and token
	// queries a second, each a round trip costing both processes CPU.
	reads map[string]*readFlight[V]
}

type readEntry[V any] struct {
	val    V
	loaded time.Time
}

// readFlight is one read of a row in flight, which the lookups of its key
// arriving before it ends share.
type readFlight[V any] struct {
	gen  uint64 // the cache's gen when the read began
	done chan struct{}
	val  V
	err  error
}

// get returns the row for key, from the cache when it was read less than
// readCacheTTL ago, else through load (whose errors are not cached).
// A hit reads only the monotonic clock (time.Since of a time.Now reading
// does), which costs half of time.Now's two clock reads; the load time is
// taken before the load, so a row is never reused past its TTL. A miss
// while another lookup of key is reading it waits for that read and
// returns its row, read no earlier than a hit's could be; a read that
// failed (its caller's context ended, say) is not shared, and each waiter
// then reads for itself. A read begun before a forget is never shared with
// a lookup after it.
func (c *readCache[V]) get(key string, load func() (V, error)) (V, error) {
	if e, ok := c.entries.Load(key); ok && time.Since(e.(*readEntry[V]).loaded) < readCacheTTL {
		return e.(*readEntry[V]).val, nil
	}
	c.mu.Lock()
	if f := c.reads[key]; f != nil && f.gen == c.gen {
		c.mu.Unlock()
		<-f.done
		if f.err == nil {
			return f.val, nil
		}
		return c.read(key, load)
	}
	// err stays set if load panics, so the waiters read for themselves
	// instead of taking a zero row.
	f := &readFlight[V]{gen: c.gen, done: make(chan struct{}), err: errReadAbandoned}
	if c.reads == nil {
		c.reads = make(map[string]*readFlight[V])
	}
	c.reads[key] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.reads[key] == f {
			delete(c.reads, key)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	f.val, f.err = c.read(key, load)
	return f.val, f.err
}

var errReadAbandoned = errors.New("read cache: the shared read did not finish")

// read loads key's row and caches it unless a forget came in between.
func (c *readCache[V]) read(key string, load func() (V, error)) (V, error) {
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	now := time.Now()
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.n >= readCacheMax {
			c.entries.Clear()
			c.n = 0
		}
		if _, loaded := c.entries.Swap(key, &readEntry[V]{val: v, loaded: now}); !loaded {
			c.n++
		}
	}
	c.mu.Unlock()
	return v, nil
}

// forget drops key after its row changed.
func (c *readCache[V]) forget(key string) {
	c.mu.Lock()
	if _, ok := c.entries.LoadAndDelete(key); ok {
		c.n--
	}
	c.gen++
	c.mu.Unlock()
}

// dbCaches are the read caches of one database, which IdentityStore's
// lookups go through.
type dbCaches struct {
	tokens   readCache[banking.Token]
	accounts readCache[banking.Account]
	// orgs: every create compares its payer's INN with its organisation's,
	// and organisations, like accounts, are only ever added.
	orgs readCache[banking.Organisation]
	// certs: every signed create and JWS request looks up its signer's
	// certificate, and the query and the copy of its DER cost a tenth of a
	// signed create's CPU.
	certs readCache[banking.Certificate]
}

var readCaches sync.Map // *sqldb.DB → *dbCaches

// cachesFor finds db's caches, shared by every store on db so that a
// change through one is seen by the others.
func cachesFor(db *sqldb.DB) *dbCaches {
	if c, ok := readCaches.Load(db); ok {
		return c.(*dbCaches)
	}
	c, _ := readCaches.LoadOrStore(db, &dbCaches{})
	return c.(*dbCaches)
}

// forgetToken drops hash from the cache after its row changed.
func forgetToken(db *sqldb.DB, hash string) { cachesFor(db).tokens.forget(hash) }

// forgetCertificate drops uuid from the cache after its row changed.
func forgetCertificate(db *sqldb.DB, uuid string) { cachesFor(db).certs.forget(uuid) }

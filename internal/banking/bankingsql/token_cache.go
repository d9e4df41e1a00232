package bankingsql

import (
	"context"
	"sync"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// tokenCacheTTL bounds how long a token row read from the database is
// reused. Every API call authenticates, and the lookup was a tenth of a
// payment call's CPU; a second of reuse removes it under load. A revocation
// through any IdentityStore of this process takes effect at once (the entry
// is dropped); one made by another process (a CLI command, a second server
// on PostgreSQL) takes effect within this TTL. Expiry is exact either way:
// Identity checks the cached row's expiry against its clock on every call.
const tokenCacheTTL = time.Second

// tokenCacheMax caps the entries; a full cache is emptied, not evicted
// entry by entry, because within a second it refills with the live tokens.
const tokenCacheMax = 10_000

// tokenCache is shared by every IdentityStore on one database, so a revoke
// through one store is seen by the others.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]tokenEntry
	// gen counts forgets: a row read before a forget must not be cached
	// after it, or a revoked token could come back for a TTL.
	gen uint64
}

type tokenEntry struct {
	tok    banking.Token
	loaded time.Time
}

var tokenCaches sync.Map // *sqldb.DB → *tokenCache

func tokenCacheFor(db *sqldb.DB) *tokenCache {
	if c, ok := tokenCaches.Load(db); ok {
		return c.(*tokenCache)
	}
	c, _ := tokenCaches.LoadOrStore(db, &tokenCache{entries: map[string]tokenEntry{}})
	return c.(*tokenCache)
}

// cachedToken returns the token row for hash, from the cache when it was
// read less than tokenCacheTTL ago. Unknown hashes are not cached, so a
// token issued by another process works at once.
func cachedToken(ctx context.Context, db *sqldb.DB, hash string) (banking.Token, error) {
	c := tokenCacheFor(db)
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[hash]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Sub(e.loaded) < tokenCacheTTL {
		return e.tok, nil
	}
	t, err := getToken(ctx, db, hash)
	if err != nil {
		return t, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if len(c.entries) >= tokenCacheMax {
			clear(c.entries)
		}
		c.entries[hash] = tokenEntry{tok: t, loaded: now}
	}
	c.mu.Unlock()
	return t, nil
}

// forgetToken drops hash from the cache after its row changed.
func forgetToken(db *sqldb.DB, hash string) {
	c := tokenCacheFor(db)
	c.mu.Lock()
	delete(c.entries, hash)
	c.gen++
	c.mu.Unlock()
}

package assistant

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultLeaseTTL is how long a slot's lease counts without renewal. Its
// process renews it every third of that while the request runs, so a
// lease outlives two missed renewals (a stalled process, a database
// briefly out of reach) and the slots of a process that crashed are free
// again within this time.
const DefaultLeaseTTL = 30 * time.Second

// leaseRecheck is how long Acquire waits before asking the store once more
// when it finds the client at its limit. A client whose request has just
// ended may send its next one the moment the last event arrives, through
// another process, before the process that served it has deleted the lease;
// the wait lets that delete land instead of refusing a client that is
// within its limit.
const leaseRecheck = 50 * time.Millisecond

// releaseTimeout bounds the delete of a lease at the end of a request. The
// delete runs after the request's own context may have ended (the client
// left, the stream was cut), so it gets a context of its own; a delete that
// fails leaves the lease to lapse within its TTL, since nothing renews it.
const releaseTimeout = 2 * time.Second

// Acquire takes one of the client's concurrent-request slots; release frees
// it and is safe to call more than once. The count in memory goes first: a
// process that already holds the client's limit refuses at once, without
// asking the database. Otherwise the slot is a lease in the store, which
// every process sharing the database counts, so the limit holds for the
// client across them all (unless Config.LocalLimits). A store that cannot
// be used is the error Acquire returns, marked as the store's (FromStore),
// and the request is refused as unavailable.
func (s *Service) Acquire(ctx context.Context, p Principal) (release func(), err error) {
	limit := s.cfg.Limits[p.Scope]
	if limit <= 0 {
		limit = 1
	}
	s.mu.Lock()
	if s.active[p.ClientID] >= limit {
		s.mu.Unlock()
		return nil, ErrTooManyRequests
	}
	s.active[p.ClientID]++
	s.mu.Unlock()
	id := ""
	if !s.cfg.LocalLimits {
		id = newUUID()
		if err := s.acquireLease(ctx, p.ClientID, id, limit); err != nil {
			s.letGo(p.ClientID, "")
			return nil, err
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Another request of the client in this process may go to
			// the store before the delete below lands; its recheck
			// covers that.
			s.letGo(p.ClientID, id)
			if id == "" {
				return
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer cancel()
			if err := s.store.ReleaseLease(rctx, id); err != nil {
				s.cfg.Log.Warn("assistant: a concurrent-request lease was not released; it lapses within its lease time",
					"client_id", p.ClientID, "lease_ttl", s.cfg.LeaseTTL, "err", err)
			}
		})
	}, nil
}

// acquireLease inserts the lease, asking once more after leaseRecheck when
// the client is at its limit, and registers it for renewal.
func (s *Service) acquireLease(ctx context.Context, clientID, id string, limit int) error {
	for attempt := 0; ; attempt++ {
		now := s.leaseNow()
		err := s.store.AcquireLease(ctx, Lease{ID: id, ClientID: clientID, ExpiresAt: now.Add(s.cfg.LeaseTTL)}, limit, now)
		if errors.Is(err, ErrTooManyRequests) {
			if attempt > 0 {
				return ErrTooManyRequests
			}
			select {
			case <-ctx.Done():
				return ErrTooManyRequests
			case <-time.After(leaseRecheck):
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[id] = struct{}{}
	if s.stopRenew == nil {
		s.stopRenew = make(chan struct{})
		go s.renewLeases(s.stopRenew)
	}
	return nil
}

// letGo takes a request of the client off the count in memory and, with
// its lease id, off the leases to renew; the renewal loop stops with the
// last lease, so an idle process runs none.
func (s *Service) letGo(clientID, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[clientID]--; s.active[clientID] <= 0 {
		delete(s.active, clientID)
	}
	if id == "" {
		return
	}
	delete(s.held, id)
	if len(s.held) == 0 && s.stopRenew != nil {
		close(s.stopRenew)
		s.stopRenew = nil
	}
}

// renewLeases is the process's one renewal loop: every third of the lease
// time it moves the expiry of every lease the process holds, in one
// statement for all of them rather than a timer for each request.
func (s *Service) renewLeases(stop <-chan struct{}) {
	every := s.cfg.LeaseTTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		ids := make([]string, 0, len(s.held))
		for id := range s.held {
			ids = append(ids, id)
		}
		s.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		now := s.leaseNow()
		renewed, err := s.store.RenewLeases(ctx, ids, now, now.Add(s.cfg.LeaseTTL))
		cancel()
		if s.cfg.Renewals != nil {
			// One line for a streak of failed renewals (a database
			// outage fails every one of them), and one when they work
			// again, instead of a line every third of the lease time.
			s.cfg.Renewals.Report(err)
		} else if err != nil {
			s.cfg.Log.Warn("assistant: concurrent-request leases not renewed; they lapse unless a later renewal lands within their lease time",
				"leases", len(ids), "lease_ttl", s.cfg.LeaseTTL, "err", err)
		}
		if err != nil {
			continue
		}
		// A lease released during the renewal is neither renewed nor
		// held any more; one still held but not renewed had lapsed,
		// and its slot may have been given out elsewhere meanwhile.
		s.mu.Lock()
		still := 0
		for _, id := range ids {
			if _, ok := s.held[id]; ok {
				still++
			}
		}
		s.mu.Unlock()
		if renewed < still {
			s.cfg.Log.Warn("assistant: concurrent-request leases had lapsed before their renewal (the process stalled or the database was out of reach for longer than the lease time); their requests no longer count against their clients' limits elsewhere",
				"lapsed", still-renewed, "lease_ttl", s.cfg.LeaseTTL)
		}
	}
}

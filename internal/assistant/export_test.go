package assistant

import "time"

// SetAppliedBillSweep makes every n-th bill sweep the old applied bill
// ids until the returned func puts the period back.
func SetAppliedBillSweep(n int64) (restore func()) {
	old := appliedBillSweep
	appliedBillSweep = n
	return func() { appliedBillSweep = old }
}

// AuthLocksHeld is the number of throttle keys whose checks are under way
// or waited for.
func (s *Service) AuthLocksHeld() int { return s.authLocks.len() }

// SetLeaseClock makes now the clock of the service's leases, so that a
// test decides when they lapse instead of the scheduler; it is set before
// the first Acquire.
func (s *Service) SetLeaseClock(now func() time.Time) { s.leaseNow = now }

// TokenRateClients is the number of clients the token rate limit holds
// request times for.
func (s *Service) TokenRateClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokenTimes)
}

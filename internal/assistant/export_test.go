package assistant

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

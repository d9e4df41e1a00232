package assistant

// SetAppliedBillSweep makes every n-th bill sweep the old applied bill
// ids until the returned func puts the period back.
func SetAppliedBillSweep(n int64) (restore func()) {
	old := appliedBillSweep
	appliedBillSweep = n
	return func() { appliedBillSweep = old }
}

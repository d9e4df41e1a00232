package smarthome

import "time"

// SetClock replaces the Service's clock, so tests move time past the
// recheck and TTL bounds without sleeping.
func (s *Service) SetClock(now func() time.Duration) { s.now, s.testClock = now, true }

// SetClock replaces the Agent's clock, so tests move time past
// FullConfigWait without sleeping.
func (a *Agent) SetClock(now func() time.Time) { a.now = now }

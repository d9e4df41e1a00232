package local

import "time"

// waitIdle waits, while nothing runs, for the next request, and reports
// false if the engine closes instead. Once the engine has been idle for
// kvIdle (when positive), the KV memory its finished requests left in the
// model's pool is handed back to the system (model.Model.TrimKVPool): the
// pool keeps a burst's caches for the requests that follow it, not for a
// quiet night. The prefix cache keeps its entries.
func (s *scheduler) waitIdle() bool {
	var trim <-chan time.Time
	if s.kvIdle > 0 && s.m.Net.PooledKVBytes() > 0 {
		t := time.NewTimer(s.kvIdle)
		defer t.Stop()
		trim = t.C
	}
	for {
		select {
		case r := <-s.submit:
			s.admit(r)
			return true
		case <-s.quit:
			return false
		case <-trim:
			s.m.Net.TrimKVPool()
			s.updateStats()
			trim = nil
		}
	}
}

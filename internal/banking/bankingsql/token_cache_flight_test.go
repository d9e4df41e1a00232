package bankingsql

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// When a row's entry is missing or expired, the lookups that arrive while
// one of them reads it wait for that read instead of each asking the
// database: under load every in-flight create missed together each time the
// TTL ended (on PostgreSQL, tens of account and organisation queries a
// second at 64 connections, one round trip each). A read that failed is
// not shared: each waiter reads for itself, with its own context. A lookup
// after a forget never takes a read begun before it.
func TestReadCacheSharesLoads(t *testing.T) {
	t.Run("concurrent misses", func(t *testing.T) {
		var c readCache[int]
		var loads atomic.Int32
		release := make(chan struct{})
		var wg sync.WaitGroup
		got := make([]int, 20)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], _ = c.get("k", func() (int, error) {
					loads.Add(1)
					<-release
					return 7, nil
				})
			}()
		}
		time.Sleep(50 * time.Millisecond)
		close(release)
		wg.Wait()
		if n := loads.Load(); n != 1 {
			t.Fatalf("%d loads for 20 concurrent misses", n)
		}
		for i, v := range got {
			if v != 7 {
				t.Fatalf("lookup %d got %d", i, v)
			}
		}
	})
	t.Run("failed read", func(t *testing.T) {
		var c readCache[int]
		var loads atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		var leader error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, leader = c.get("k", func() (int, error) {
				loads.Add(1)
				close(started)
				<-release
				return 0, errors.New("context canceled")
			})
		}()
		<-started
		waiter := make(chan int)
		go func() {
			v, _ := c.get("k", func() (int, error) { loads.Add(1); return 8, nil })
			waiter <- v
		}()
		time.Sleep(20 * time.Millisecond)
		close(release)
		<-done
		if v := <-waiter; leader == nil || v != 8 || loads.Load() != 2 {
			t.Fatalf("leader %v, waiter %d, %d loads", leader, v, loads.Load())
		}
	})
	t.Run("forget during a read", func(t *testing.T) {
		var c readCache[int]
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = c.get("k", func() (int, error) {
				close(started)
				<-release
				return 1, nil
			})
		}()
		<-started
		c.forget("k")
		after := make(chan int)
		go func() {
			v, _ := c.get("k", func() (int, error) { return 2, nil })
			after <- v
		}()
		select {
		case v := <-after:
			if v != 2 {
				t.Fatalf("lookup after the forget got %d", v)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("lookup after the forget waited for the read begun before it")
		}
		close(release)
		<-done
		if v, _ := c.get("k", func() (int, error) { return 3, nil }); v != 2 {
			t.Fatalf("cached %d after the forget, want the later read's 2", v)
		}
	})
}

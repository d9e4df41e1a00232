package banking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestFormatPaymentNumber(t *testing.T) {
	for _, tc := range []struct {
		seq  int64
		want string
	}{
		{1, "1"}, {42, "42"}, {999998, "999998"}, {999999, "999999"},
		{1000000, "1"}, {1000001, "2"}, {2 * 999999, "999999"}, {2*999999 + 1, "1"},
	} {
		if got := FormatPaymentNumber(tc.seq); got != tc.want {
			t.Errorf("FormatPaymentNumber(%d) = %q, want %q", tc.seq, got, tc.want)
		}
	}
}

// numberCounter is a PaymentNumberReserver over a map, counting its calls.
type numberCounter struct {
	PaymentStore
	mu    sync.Mutex
	last  map[string]int64
	calls int
	err   error
}

func (c *numberCounter) ReserveNumbers(_ context.Context, org string, n int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	c.calls++
	c.last[org] += n
	return c.last[org], nil
}

// assign numbers an organisation's documents one after another from
// reserved blocks, each organisation on its own, wrapping from 999999 to
// 1; a new paymentNumbers over the same counter (a restart) continues
// after the reserved block, never below a number already given.
func TestPaymentNumbersAssign(t *testing.T) {
	ctx := context.Background()
	store := &numberCounter{last: map[string]int64{"wrap": 999999 - 2}}
	var n paymentNumbers
	for _, tc := range []struct {
		nums *paymentNumbers
		org  string
		want []string
	}{
		{&n, "a", []string{"1", "2", "3"}},
		{&n, "b", []string{"1", "2"}},
		{&n, "a", []string{"4"}},
		{&n, "wrap", []string{"999998", "999999", "1", "2"}},
		{&paymentNumbers{}, "a", []string{"17", "18"}}, // restarted: the next block
		{&paymentNumbers{}, "wrap", []string{"15", "16"}},
	} {
		for _, want := range tc.want {
			got, err := tc.nums.assign(ctx, store, tc.org)
			if err != nil || got != want {
				t.Fatalf("%s: got %q, %v; want %q", tc.org, got, err, want)
			}
		}
	}
	if store.calls != 5 {
		t.Errorf("%d reservations, want one per organisation and process (5)", store.calls)
	}
}

// A store without a counter numbers in memory from 1; a failed
// reservation fails the create and takes no number.
func TestPaymentNumbersWithoutCounter(t *testing.T) {
	ctx := context.Background()
	var n paymentNumbers
	for i, want := range []string{"1", "2"} {
		if got, err := n.assign(ctx, nil, "a"); err != nil || got != want {
			t.Fatalf("%d: %q, %v", i, got, err)
		}
	}
	for i := 3; i <= maxNumberBlock+2; i++ {
		if _, err := n.assign(ctx, nil, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := n.assign(ctx, nil, "a"); got != itoa(maxNumberBlock+3) {
		t.Fatalf("after a block: %q", got)
	}
	broken := &numberCounter{last: map[string]int64{}, err: errors.New("down")}
	var m paymentNumbers
	if _, err := m.assign(ctx, broken, "a"); err == nil {
		t.Fatal("a failed reservation gave a number")
	}
	broken.err = nil
	if got, err := m.assign(ctx, broken, "a"); err != nil || got != "1" {
		t.Fatalf("after the failure: %q, %v", got, err)
	}
}

// Within one process, concurrent assignments in one organisation get
// distinct consecutive numbers.
func TestPaymentNumbersConcurrent(t *testing.T) {
	const n = 500
	store := &numberCounter{last: map[string]int64{}}
	var nums paymentNumbers
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := nums.assign(context.Background(), store, "a")
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, s := range got {
		seen[s] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[itoa(i)] {
			t.Fatalf("number %d missing from %d concurrent assignments", i, n)
		}
	}
}

// gatedCounter is a numberCounter whose reservations after the first wait
// for a value on gate, recording each reservation's size.
type gatedCounter struct {
	numberCounter
	gate  chan struct{}
	sizes []int64
}

func (c *gatedCounter) ReserveNumbers(ctx context.Context, org string, n int64) (int64, error) {
	c.mu.Lock()
	first := len(c.sizes) == 0
	c.sizes = append(c.sizes, n)
	c.mu.Unlock()
	if !first {
		<-c.gate
	}
	return c.numberCounter.ReserveNumbers(ctx, org, n)
}

// The next block is reserved ahead, once half of the one in use is handed
// out, so the creates that use up the rest of it do not wait for the
// store; only a create that finds both used up waits. Blocks used up
// within a second grow, contiguous in one process.
func TestPaymentNumbersReserveAhead(t *testing.T) {
	ctx := context.Background()
	store := &gatedCounter{numberCounter: numberCounter{last: map[string]int64{}}, gate: make(chan struct{})}
	var n paymentNumbers
	done := make(chan error)
	go func() {
		// The whole first block, while the reservation ahead is held at
		// the gate.
		for i := 1; i <= minNumberBlock; i++ {
			if got, err := n.assign(ctx, store, "a"); err != nil || got != itoa(i) {
				done <- fmt.Errorf("%d: %q, %v", i, got, err)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("creates waited for the reservation ahead while their block lasted")
	}
	next := make(chan string)
	go func() {
		got, _ := n.assign(ctx, store, "a")
		next <- got
	}()
	select {
	case got := <-next:
		t.Fatalf("number %q before the reservation ahead finished", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(store.gate)
	if got := <-next; got != itoa(minNumberBlock+1) {
		t.Fatalf("after the first block: %q", got)
	}
	for i := minNumberBlock + 2; i <= 2000; i++ {
		if got, err := n.assign(ctx, store, "a"); err != nil || got != itoa(i) {
			t.Fatalf("%d: %q, %v", i, got, err)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.sizes) < 4 || store.sizes[0] != minNumberBlock || store.sizes[len(store.sizes)-1] <= minNumberBlock ||
		!slices.IsSorted(store.sizes) || slices.Max(store.sizes) > maxNumberBlock {
		t.Fatalf("reservation sizes %v: want growing from %d, at most %d", store.sizes, minNumberBlock, maxNumberBlock)
	}
}

// A block used up within a second doubles the next reservation, one that
// lasted over a minute halves it, within the bounds.
func TestPaymentNumbersAdapt(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	o := &orgNumbers{size: minNumberBlock}
	steps := []struct {
		after time.Duration
		want  int64
	}{
		{0, minNumberBlock}, // the first block: nothing to measure
		{100 * time.Millisecond, 2 * minNumberBlock},
		{100 * time.Millisecond, 4 * minNumberBlock},
		{10 * time.Second, 4 * minNumberBlock},
		{2 * time.Minute, 2 * minNumberBlock},
		{time.Hour, minNumberBlock},
		{time.Hour, minNumberBlock},
	}
	now := t0
	for i, st := range steps {
		now = now.Add(st.after)
		o.adapt(now)
		if o.size != st.want {
			t.Fatalf("step %d: size %d, want %d", i, o.size, st.want)
		}
	}
	for range 20 {
		now = now.Add(time.Millisecond)
		o.adapt(now)
	}
	if o.size != maxNumberBlock {
		t.Fatalf("size %d after many fast blocks, want %d", o.size, maxNumberBlock)
	}
}

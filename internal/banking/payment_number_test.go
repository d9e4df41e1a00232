package banking

import (
	"context"
	"errors"
	"sync"
	"testing"
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
		{&paymentNumbers{}, "a", []string{"65", "66"}}, // restarted: the next block
		{&paymentNumbers{}, "wrap", []string{"63", "64"}},
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
	for i := 3; i <= NumberBlock+2; i++ {
		if _, err := n.assign(ctx, nil, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := n.assign(ctx, nil, "a"); got != itoa(NumberBlock+3) {
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

package assistant_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// errOutage stands for the database being unavailable for a moment.
var errOutage = errors.New("database unavailable")

// isOutage is the billing tests' Config.Unavailable: errOutage alone is
// the database being away for a moment.
func isOutage(err error) bool { return errors.Is(err, errOutage) }

// billingDB is a fresh SQLite database with the assistant's schema.
func billingDB(t *testing.T) *sqldb.DB {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// oneModel is the billing tests' engine: one chat model, m, whose every
// answer is words.
func oneModel(words ...string) *scriptEngine {
	return &scriptEngine{fakeEngine: fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "1", Type: "chat", ContextWindow: 100}}}, words: words}
}

// prepaidClient is a new prepaid client of svc with a balance of m that the
// tests' chats do not use up.
func prepaidClient(t *testing.T, svc *assistant.Service) assistant.Principal {
	t.Helper()
	cr, err := svc.CreateClient(context.Background(), assistant.ScopePers, []assistant.Balance{{Model: "m", Tokens: cutBalance}})
	if err != nil {
		t.Fatal(err)
	}
	return assistant.Principal{ClientID: cr.ClientID, Scope: assistant.ScopePers}
}

// sayHi runs p's chat "hi" through svc, its answer's deltas dropped: what
// the tests look at is the bill it leaves.
func sayHi(t *testing.T, svc *assistant.Service, p assistant.Principal) (assistant.Result, error) {
	t.Helper()
	return svc.Run(context.Background(), scriptedChat(t, svc, p, "hi"), func(assistant.Delta) error { return nil })
}

// outageBills is a store whose bills fail while down is set: with
// errOutage, or with another error when refuse is set.
type outageBills struct {
	assistant.Store
	down, refuse atomic.Bool
}

func (o *outageBills) fail() error {
	if !o.down.Load() {
		return nil
	}
	if o.refuse.Load() {
		return errors.New("the client's row is gone")
	}
	return errOutage
}

func (o *outageBills) Charge(ctx context.Context, b assistant.Bill) error {
	if err := o.fail(); err != nil {
		return err
	}
	return o.Store.Charge(ctx, b)
}

func (o *outageBills) RecordUsage(ctx context.Context, b assistant.Bill) error {
	if err := o.fail(); err != nil {
		return err
	}
	return o.Store.RecordUsage(ctx, b)
}

// reports records what the billing loop reports.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) Report(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// waitReports waits up to 5 s for the reports to satisfy ok, given their
// number and the last one's error.
func waitReports(t *testing.T, r *reports, what string, ok func(n int, err error) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		n, err := r.last()
		if ok(n, err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: none in 5 s (last %v of %d)", what, err, n)
		}
	}
}

func (r *reports) last() (n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) == 0 {
		return 0, nil
	}
	return len(r.errs), r.errs[len(r.errs)-1]
}

// A chat that ends while the database cannot take its bill keeps its
// answer, and the bill is charged once the database is back: once, for
// prepaid and postpaid clients alike.
func TestBillKeptThroughOutage(t *testing.T) {
	for _, scope := range []assistant.Scope{assistant.ScopePers, assistant.ScopeCorp} {
		t.Run(string(scope), func(t *testing.T) {
			db := billingDB(t)
			store := &outageBills{Store: assistantsql.New(db)}
			rep := &reports{}
			eng := oneModel("a", "b")
			svc := assistant.NewService(store, eng, assistant.Config{Unavailable: isOutage,
				BillRetry: 10 * time.Millisecond, Billing: rep})
			cr, err := svc.CreateClient(context.Background(), scope, []assistant.Balance{{Model: "m", Tokens: cutBalance}})
			if err != nil {
				t.Fatal(err)
			}
			p := assistant.Principal{ClientID: cr.ClientID, Scope: scope}
			billed := func() int64 {
				if scope.Prepaid() {
					return spent(t, svc, p)
				}
				us, err := svc.Usage(context.Background(), cr.ClientID)
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for _, u := range us {
					n += u.Tokens
				}
				return n
			}
			store.down.Store(true)
			res, err := sayHi(t, svc, p)
			if err != nil || len(res.Choices) != 1 {
				t.Fatalf("Run during the outage: %+v %v", res, err)
			}
			want := billable(res.Usage)
			if got := billed(); got != 0 || svc.KeptBills() != 1 {
				t.Fatalf("during the outage: %d billed, %d kept; want 0 and 1", got, svc.KeptBills())
			}
			// Run reported the outage; a pass of the retry loop, due
			// every 10 ms, reports it again. Waited for, not slept on: a
			// loaded machine may run the loop's first tick late.
			waitReports(t, rep, "a retry's report of the outage", func(n int, err error) bool {
				return n >= 2 && errors.Is(err, errOutage)
			})
			store.down.Store(false)
			// The loop charges the bill, then, finding none left, reports
			// the pass that emptied the queue a moment after KeptBills
			// says 0: the report is the end to wait for.
			waitReports(t, rep, "the report of the pass that charged the bill", func(_ int, err error) bool { return err == nil })
			if got := billed(); got != want || svc.KeptBills() != 0 {
				t.Fatalf("after the outage: %d billed, %d kept; want %d and 0", got, svc.KeptBills(), want)
			}
		})
	}
}

// A bill error that is no outage fails the chat as before, and a bill
// still kept when the service closes is logged as lost, with what an
// operator needs to charge it by hand.
func TestBillRefusedOrLostAtClose(t *testing.T) {
	db := billingDB(t)
	store := &outageBills{Store: assistantsql.New(db)}
	var logged bytes.Buffer
	eng := oneModel("a")
	svc := assistant.NewService(store, eng, assistant.Config{Unavailable: isOutage,
		BillRetry: time.Hour, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	p := prepaidClient(t, svc)
	store.down.Store(true)
	store.refuse.Store(true)
	if _, err := sayHi(t, svc, p); err == nil || svc.KeptBills() != 0 {
		t.Fatalf("a bill refused for good: Run %v, %d kept", err, svc.KeptBills())
	}
	store.refuse.Store(false)
	if _, err := sayHi(t, svc, p); err != nil || svc.KeptBills() != 1 {
		t.Fatalf("a bill in an outage: Run %v, %d kept", err, svc.KeptBills())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	svc.Close(ctx)
	if !strings.Contains(logged.String(), "lost with the process") || !strings.Contains(logged.String(), p.ClientID) || !strings.Contains(logged.String(), "tokens=") {
		t.Fatalf("log: %s", logged.String())
	}
	if svc.KeptBills() != 0 || spent(t, svc, p) != 0 {
		t.Fatalf("after Close: %d kept, %d spent", svc.KeptBills(), spent(t, svc, p))
	}
}

// lostAcks is a store whose bills commit and then fail as an outage, while
// cut is set: the connection cut after COMMIT, the answer lost.
type lostAcks struct {
	assistant.Store
	cut atomic.Bool
}

func (l *lostAcks) Charge(ctx context.Context, b assistant.Bill) error {
	if err := l.Store.Charge(ctx, b); err != nil || !l.cut.Load() {
		return err
	}
	return errOutage
}

func (l *lostAcks) RecordUsage(ctx context.Context, b assistant.Bill) error {
	if err := l.Store.RecordUsage(ctx, b); err != nil || !l.cut.Load() {
		return err
	}
	return errOutage
}

// A bill whose COMMIT reached the database but whose answer was lost is
// kept and retried like any bill the database could not take, and the
// retry charges nothing: the bill is charged once, not twice.
func TestBillWithLostAcknowledgementChargedOnce(t *testing.T) {
	db := billingDB(t)
	store := &lostAcks{Store: assistantsql.New(db)}
	eng := oneModel("a", "b")
	svc := assistant.NewService(store, eng, assistant.Config{Unavailable: isOutage,
		BillRetry: 5 * time.Millisecond})
	p := prepaidClient(t, svc)
	store.cut.Store(true)
	res, err := sayHi(t, svc, p)
	if err != nil || svc.KeptBills() != 1 {
		t.Fatalf("Run with its bill's answer lost: %v, %d kept", err, svc.KeptBills())
	}
	// The retries while the answers are still lost charge nothing either.
	time.Sleep(30 * time.Millisecond)
	store.cut.Store(false)
	waitKept(t, svc, 0)
	if got, want := spent(t, svc, p), billable(res.Usage); got != want {
		t.Fatalf("spent %d, want %d: the retry of an applied bill charged again", got, want)
	}
}

// waitKept waits up to five seconds for svc to keep n bills.
func waitKept(t *testing.T, svc *assistant.Service, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for svc.KeptBills() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d bills kept, want %d", svc.KeptBills(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Every appliedBillSweep-th bill forgets the ids of bills made more than
// AppliedBillRetention ago, and only those.
func TestAppliedBillIdsSwept(t *testing.T) {
	defer assistant.SetAppliedBillSweep(10)()
	db := billingDB(t)
	var skew atomic.Int64
	eng := oneModel("a")
	svc := assistant.NewService(assistantsql.New(db), eng, assistant.Config{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	cr, err := svc.CreateClient(context.Background(), assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := assistant.Principal{ClientID: cr.ClientID, Scope: assistant.ScopeCorp}
	applied := func() (n int) {
		if err := db.R.QueryRow(`SELECT COUNT(*) FROM assistant_applied_bills`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 10 {
		if i == 1 {
			// The first bill is now older than the retention.
			skew.Store(int64(assistant.AppliedBillRetention + 24*time.Hour))
		}
		if _, err := sayHi(t, svc, p); err != nil {
			t.Fatal(err)
		}
		if i == 8 && applied() != 9 {
			t.Fatalf("%d ids before the sweep, want 9", applied())
		}
	}
	if got := applied(); got != 9 {
		t.Fatalf("%d ids after the sweep, want 9: the old one forgotten, the recent ones kept", got)
	}
}

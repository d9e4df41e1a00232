package assistant_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/assistant/billjournal"
	"partnerapi/internal/testenv"
)

// crashingStore is a store whose bills either fail as an outage (down) or
// commit and then fail as one (cut: the answer lost after COMMIT).
type crashingStore struct {
	outageBills
	lost lostAcks
}

func (c *crashingStore) Charge(ctx context.Context, b assistant.Bill) error {
	if c.lost.cut.Load() {
		return c.lost.Charge(ctx, b)
	}
	return c.outageBills.Charge(ctx, b)
}

func (c *crashingStore) RecordUsage(ctx context.Context, b assistant.Bill) error {
	if c.lost.cut.Load() {
		return c.lost.RecordUsage(ctx, b)
	}
	return c.outageBills.RecordUsage(ctx, b)
}

// A service that kept bills through an outage and then crashed (dropped
// without Close; its journal file closed, as the system closes a dead
// process's files) leaves them to the next service on the same data
// directory and database: KeptBills counts them from its start, and they
// are charged exactly once when the database is back, the one whose
// COMMIT went through before the crash included.
func TestKeptBillsSurviveACrash(t *testing.T) {
	db := billingDB(t)
	dir := t.TempDir()
	eng := oneModel("a", "b")

	// The first process: its store stays down for good, so that only the
	// second process can charge anything.
	j1, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	store1 := &crashingStore{outageBills: outageBills{Store: assistantsql.New(db)}, lost: lostAcks{Store: assistantsql.New(db)}}
	svc1 := assistant.NewService(store1, eng, assistant.Config{Unavailable: isOutage, BillRetry: 5 * time.Millisecond, Journal: j1})
	pers, err := svc1.CreateClient(context.Background(), assistant.ScopePers, []assistant.Balance{{Model: "m", Tokens: cutBalance}})
	if err != nil {
		t.Fatal(err)
	}
	corp, err := svc1.CreateClient(context.Background(), assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	pp := assistant.Principal{ClientID: pers.ClientID, Scope: assistant.ScopePers}
	cp := assistant.Principal{ClientID: corp.ClientID, Scope: assistant.ScopeCorp}
	run := func(p assistant.Principal) int64 {
		res, err := sayHi(t, svc1, p)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return billable(res.Usage)
	}
	store1.down.Store(true)
	wantPers := run(pp) + run(pp)
	wantCorp := run(cp)
	store1.lost.cut.Store(true)
	wantPers += run(pp) // applied, its answer lost
	store1.lost.cut.Store(false)
	if svc1.KeptBills() != 4 {
		t.Fatalf("%d bills kept before the crash, want 4", svc1.KeptBills())
	}
	if err := j1.Close(); err != nil { // the crash
		t.Fatal(err)
	}

	store2 := &outageBills{Store: assistantsql.New(db)}
	store2.down.Store(true)
	j2, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	var logged testenv.LogBuffer
	svc2 := assistant.NewService(store2, eng, assistant.Config{Unavailable: isOutage, BillRetry: 5 * time.Millisecond, Journal: j2,
		Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if svc2.KeptBills() != 4 {
		t.Fatalf("the restarted service keeps %d bills, want 4", svc2.KeptBills())
	}
	time.Sleep(20 * time.Millisecond) // retries while the database is still down
	store2.down.Store(false)
	waitKept(t, svc2, 0)
	usage, err := svc2.Usage(context.Background(), corp.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if got := spent(t, svc2, pp); got != wantPers || len(usage) != 1 || usage[0].Tokens != wantCorp {
		t.Fatalf("after the restart: prepaid spent %d, postpaid usage %+v; want %d and %d", got, usage, wantPers, wantCorp)
	}
	if !strings.Contains(logged.String(), "bills kept by a previous process") {
		t.Errorf("the replay is not logged: %s", logged.String())
	}
	// Charged, the bills are out of the journal: a third start has none.
	j2.Close()
	j3, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j3.Close()
	if len(j3.Bills()) != 0 {
		t.Fatalf("charged bills still journaled: %+v", j3.Bills())
	}
}

// A bill that the database cannot take and the journal cannot take either
// fails as it did before bills were kept; with a journal, Close leaves the
// bills still kept in it rather than logging them lost.
func TestBillFailsWhenTheJournalCannotKeepIt(t *testing.T) {
	db := billingDB(t)
	dir := t.TempDir()
	j, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := &outageBills{Store: assistantsql.New(db)}
	var logged bytes.Buffer
	eng := oneModel("a")
	svc := assistant.NewService(store, eng, assistant.Config{Unavailable: isOutage,
		BillRetry: time.Hour, Journal: j, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	p := prepaidClient(t, svc)
	store.down.Store(true)
	if _, err := sayHi(t, svc, p); err != nil || svc.KeptBills() != 1 {
		t.Fatalf("a bill journaled: Run %v, %d kept", err, svc.KeptBills())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	svc.Close(ctx)
	if strings.Contains(logged.String(), "lost with the process") || !strings.Contains(logged.String(), "stay in the journal") {
		t.Fatalf("Close with a journal: %s", logged.String())
	}
	j.Close()
	if _, err := sayHi(t, svc, p); !errors.Is(err, errOutage) || svc.KeptBills() != 0 {
		t.Fatalf("a bill the journal cannot keep: Run %v, %d kept; want the outage and none", err, svc.KeptBills())
	}
	again, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if len(again.Bills()) != 1 {
		t.Fatalf("%d bills journaled, want the one kept before Close", len(again.Bills()))
	}
}

// A kept bill older than MaxKeptBillAge is not charged, since the store
// may have forgotten that it applied it, but dropped with an ERROR line
// naming it, and taken out of the journal.
func TestKeptBillTooOldIsDroppedNotCharged(t *testing.T) {
	db := billingDB(t)
	dir := t.TempDir()
	j, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	store := &outageBills{Store: assistantsql.New(db)}
	var logged testenv.LogBuffer
	eng := oneModel("a")
	svc := assistant.NewService(store, eng, assistant.Config{Unavailable: isOutage,
		BillRetry: 5 * time.Millisecond, Journal: j, Now: now, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	p := prepaidClient(t, svc)
	store.down.Store(true)
	if _, err := sayHi(t, svc, p); err != nil || svc.KeptBills() != 1 {
		t.Fatalf("Run: %v, %d kept", err, svc.KeptBills())
	}
	skew.Store(int64(assistant.MaxKeptBillAge + time.Hour))
	store.down.Store(false)
	waitKept(t, svc, 0)
	if got := spent(t, svc, p); got != 0 {
		t.Fatalf("a bill older than MaxKeptBillAge charged %d", got)
	}
	if s := logged.String(); !strings.Contains(s, "too old to charge safely") || !strings.Contains(s, p.ClientID) || !strings.Contains(s, "tokens=") {
		t.Fatalf("log: %s", s)
	}
	j.Close()
	again, err := billjournal.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if len(again.Bills()) != 0 {
		t.Fatalf("the dropped bill is still journaled: %+v", again.Bills())
	}
}

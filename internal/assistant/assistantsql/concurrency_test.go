package assistantsql_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestConcurrentFileWrites races the file writes of one client against the
// real store. A client's first uploads find no usage row to hold the quota's
// condition, so of eight first uploads of 4 bytes into a 10-byte quota the
// insert of the row must still admit exactly two; concurrent deletes of one
// file must free its bytes once, or the quota would count room that is not
// free (a double free lets a client store more than its quota for good).
func TestConcurrentFileWrites(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := clientsAB(t, db)
		const quota = 10
		save := func(id string, n int) error {
			return s.SaveFile(ctx, assistant.File{ID: id, ClientID: "a", Filename: id + ".txt", Purpose: "general",
				MediaType: "text/plain", Bytes: int64(n), CreatedAt: time.Unix(100, 0)}, bytes.Repeat([]byte("x"), n), quota)
		}
		race := func(n int, fn func(i int) error, refusal error) int {
			errs := make(chan error, n)
			for i := range n {
				go func() { errs <- fn(i) }()
			}
			ok := 0
			for range n {
				switch err := <-errs; {
				case err == nil:
					ok++
				case !errors.Is(err, refusal):
					t.Errorf("racing write: %v", err)
				}
			}
			return ok
		}
		if n := race(8, func(i int) error { return save(fmt.Sprintf("f%d", i), 4) }, assistant.ErrFileQuota); n != 2 {
			t.Fatalf("%d of 8 concurrent first uploads of 4 bytes stored under a quota of %d, want 2", n, quota)
		}
		list, err := s.Files(ctx, "a")
		if err != nil || len(list) != 2 {
			t.Fatalf("listed %d files (%v), want 2", len(list), err)
		}
		victim := list[0].ID
		if n := race(8, func(int) error { return s.DeleteFile(ctx, "a", victim) }, assistant.ErrNoSuchFile); n != 1 {
			t.Fatalf("%d of 8 concurrent deletes of one file succeeded, want 1", n)
		}
		// 4 bytes are stored, so 6 fit and 7 do not: the deletes freed
		// the file's 4 bytes once.
		if err := save("big", 7); !errors.Is(err, assistant.ErrFileQuota) {
			t.Fatalf("7 bytes into 6 of room after concurrent deletes: %v", err)
		}
		if err := save("fits", 6); err != nil {
			t.Fatalf("6 bytes into 6 of room: %v", err)
		}
	})
}

// TestConcurrentChargesNeverBelowZero runs more concurrent charges of one
// prepaid balance than it holds, as ten chats of one client finishing
// together do. Every charge that found tokens is taken in full or down to
// zero, the balance ends at zero and never below, and the charges after it
// ran out are refused.
func TestConcurrentChargesNeverBelowZero(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		if err := s.CreateClient(ctx, assistant.Client{ID: "p", SecretHash: "h", Scope: assistant.ScopePers, CreatedAt: time.Unix(1, 0)},
			[]assistant.Balance{{Model: "m", Tokens: 95}}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		charged, refused := 0, 0
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Charge(ctx, assistant.Bill{ID: newBillID(), ClientID: "p", Model: "m", Prepaid: true, Tokens: 10, MadeAt: time.Now()})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					charged++
				case errors.Is(err, assistant.ErrPaymentRequired):
					refused++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// 95 tokens pay nine charges of 10 in full and the tenth down to
		// zero; the other ten find nothing left.
		if charged != 10 || refused != 10 {
			t.Errorf("%d charged, %d refused; want 10 and 10", charged, refused)
		}
		bs, err := s.Balances(ctx, "p")
		if err != nil || len(bs) != 1 || bs[0].Tokens != 0 {
			t.Fatalf("balance after the race: %+v %v, want 0", bs, err)
		}
	})
}

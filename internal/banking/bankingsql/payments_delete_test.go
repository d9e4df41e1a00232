package bankingsql

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// finalWebhooks counts the outbox rows of org1's document id in status.
func finalWebhooks(t *testing.T, db *sqldb.DB, id, status string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM banking_payment_webhooks WHERE org_id = 'org1' AND external_id = $1 AND status = $2`,
		id, status).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A bank user's deletion of a draft (banking.PaymentStore.DeletePayment):
// from each deletable status the document ends DELETED with the comment,
// one history row and one outbox row the dispatcher hands out like any
// final status's, with the comment and the deletion's time as its
// eventTime. A document past the drafts, one deleted already and one of
// another organisation are refused and nothing is written.
func TestPaymentStoreDeleteConformance(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		deleted := at.Add(time.Hour)
		ids := map[string]string{
			banking.StatusCreated:     "d0000000-0000-4000-8000-000000000001",
			banking.StatusCheckError:  "d0000000-0000-4000-8000-000000000002",
			banking.StatusPartSigned:  "d0000000-0000-4000-8000-000000000003",
			banking.StatusImplemented: "d0000000-0000-4000-8000-000000000004",
		}
		for status, id := range ids {
			sp := storedPayment("org1", id)
			sp.Status = status
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: status, At: at}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, status := range banking.DeletableStatuses {
			id := ids[status]
			comment := "Удалён пользователем банка из " + status
			sp, err := s.DeletePayment(ctx, "org1", id, comment, deleted)
			if err != nil || sp.Status != banking.StatusDeleted || sp.Comment != comment || !sp.UpdatedAt.Equal(deleted) || sp.Doc.ExternalID != id {
				t.Fatalf("delete from %s: %+v %v", status, sp, err)
			}
			if got, err := s.GetPayment(ctx, "org1", id); err != nil || got.Status != banking.StatusDeleted || got.Comment != comment {
				t.Fatalf("read after deleting from %s: %+v %v", status, got, err)
			}
			h, err := s.PaymentHistory(ctx, "org1", id)
			if err != nil || len(h) != 3 || h[2] != (banking.StatusChange{Status: banking.StatusDeleted, Comment: comment, At: deleted}) {
				t.Fatalf("history after deleting from %s: %+v %v", status, h, err)
			}
			if n := finalWebhooks(t, db, id, banking.StatusDeleted); n != 1 {
				t.Fatalf("%d DELETED outbox rows after deleting from %s, want 1", n, status)
			}
		}
		st, err := s.PaymentState(ctx, "org1", ids[banking.StatusCreated], banking.DigestFormat{})
		if err != nil || st.BankStatus != banking.StatusDeleted || string(st.BankComment) != "Удалён пользователем банка из CREATED" {
			t.Fatalf("state after deleting: %+v %v", st, err)
		}
		// The dispatcher hands out the three DELETED events as it does the
		// IMPLEMENTED one, each with its comment and the deletion's time.
		due, err := s.DueWebhooks(ctx, deleted, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]banking.WebhookEvent{}
		for _, ev := range due {
			got[ev.ExternalID+" "+ev.BankStatus] = ev
		}
		for _, status := range banking.DeletableStatuses {
			ev, ok := got[ids[status]+" "+banking.StatusDeleted]
			if !ok || !ev.EventTime.Equal(deleted) || ev.BankComment != "Удалён пользователем банка из "+status || ev.ClientID != "p" {
				t.Fatalf("the DELETED webhook of the draft in %s: %+v (due %+v)", status, ev, due)
			}
		}
		if _, ok := got[ids[banking.StatusImplemented]+" "+banking.StatusImplemented]; len(due) != 4 || !ok {
			t.Fatalf("due webhooks %+v, want the IMPLEMENTED one and three DELETED", due)
		}

		for _, tc := range []struct {
			org, id string
			kind    banking.Kind
		}{
			{"org1", ids[banking.StatusImplemented], banking.KindWorkflow},
			{"org1", ids[banking.StatusCreated], banking.KindWorkflow}, // deleted already: DELETED is final
			{"org2", ids[banking.StatusCreated], banking.KindDataNotFound},
			{"org1", "d0000000-0000-4000-8000-0000000000ff", banking.KindDataNotFound},
		} {
			before, _ := s.PaymentHistory(ctx, tc.org, tc.id)
			if _, err := s.DeletePayment(ctx, tc.org, tc.id, "again", deleted.Add(time.Minute)); banking.KindOf(err) != tc.kind {
				t.Fatalf("delete %s of %s: %v, want kind %v", tc.id, tc.org, err, tc.kind)
			}
			if after, _ := s.PaymentHistory(ctx, tc.org, tc.id); len(after) != len(before) {
				t.Fatalf("a refused deletion of %s wrote history: %+v", tc.id, after)
			}
		}
		if sp, _ := s.GetPayment(ctx, "org1", ids[banking.StatusImplemented]); sp.Status != banking.StatusImplemented {
			t.Fatalf("a refused deletion changed the document: %+v", sp)
		}
		if n := finalWebhooks(t, db, ids[banking.StatusImplemented], banking.StatusDeleted) + finalWebhooks(t, db, ids[banking.StatusCreated], banking.StatusDeleted); n != 1 {
			t.Fatalf("refused deletions queued webhooks: %d DELETED rows, want the first deletion's 1", n)
		}
	})
}

// TestConcurrentSignAndDelete races a signing that completes the set of
// signatures (CREATED → … → IMPLEMENTED) with a bank user's deletion of
// the same draft, as a partner's signer and the bank's user acting
// together do. Both moves are conditional on the status, so exactly one
// lands: the document ends IMPLEMENTED or DELETED, its history holds one
// of the two outcomes, and exactly one final webhook is queued — never a
// signed document the partner is told was deleted, or both.
func TestConcurrentSignAndDelete(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		var signing []banking.StatusChange
		for _, st := range banking.ProcessingPath {
			signing = append(signing, banking.StatusChange{Status: st, At: at.Add(time.Second)})
		}
		wins := map[string]int{}
		for d := range 20 {
			id := fmt.Sprintf("d1000000-0000-4000-8000-%012d", d)
			if err := s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var signErr, deleteErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, signErr = s.AdvancePayment(ctx, "org1", id, banking.StatusCreated, []banking.SignatureRole{banking.RoleSoleAuthority}, signing)
			}()
			go func() {
				defer wg.Done()
				_, deleteErr = s.DeletePayment(ctx, "org1", id, "", at.Add(time.Second))
			}()
			wg.Wait()
			for _, err := range []error{signErr, deleteErr} {
				if err != nil && banking.KindOf(err) != banking.KindWorkflow {
					t.Fatalf("%s: %v, want success or a workflow error", id, err)
				}
			}
			if (signErr == nil) == (deleteErr == nil) {
				t.Fatalf("%s: sign %v, delete %v: want exactly one to land", id, signErr, deleteErr)
			}
			want, moves := banking.StatusImplemented, 1+len(banking.ProcessingPath)
			if deleteErr == nil {
				want, moves = banking.StatusDeleted, 2
			}
			wins[want]++
			sp, err := s.GetPayment(ctx, "org1", id)
			if err != nil || sp.Status != want {
				t.Fatalf("%s: after the race %+v %v, want %s", id, sp, err, want)
			}
			if h, err := s.PaymentHistory(ctx, "org1", id); err != nil || len(h) != moves || h[len(h)-1].Status != want {
				t.Fatalf("%s: history %+v %v, want %d moves ending %s", id, h, err, moves, want)
			}
			if finalWebhooks(t, db, id, want) != 1 || finalWebhooks(t, db, id, banking.StatusImplemented)+finalWebhooks(t, db, id, banking.StatusDeleted) != 1 {
				t.Fatalf("%s: want exactly one final webhook, %s", id, want)
			}
		}
		t.Logf("of 20 races: %v", wins)
	})
}

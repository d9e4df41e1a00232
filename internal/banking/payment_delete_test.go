package banking

import (
	"context"
	"strings"
	"testing"
	"time"
)

// DeleteDraft deletes a draft with its comment and refuses, writing
// nothing, a document past the drafts and one that does not exist.
func TestDeleteDraft(t *testing.T) {
	ctx := context.Background()
	store := newMemPayments()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for id, status := range map[string]string{"draft": StatusCreated, "checked": StatusCheckError, "half": StatusPartSigned, "done": StatusImplemented} {
		sp := &StoredPayment{OrgID: "org1", Status: status, Doc: Payment{ExternalID: id}}
		if err := store.CreatePayment(ctx, sp, []StatusChange{{Status: status, At: at}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"draft", "checked", "half"} {
		sp, err := DeleteDraft(ctx, store, "org1", id, "Удалён пользователем", at.Add(time.Minute))
		if err != nil || sp.Status != StatusDeleted || sp.Comment != "Удалён пользователем" {
			t.Fatalf("delete %s: %+v %v", id, sp, err)
		}
		h, _ := store.PaymentHistory(ctx, "org1", id)
		if last := h[len(h)-1]; len(h) != 2 || last.Status != StatusDeleted || !last.At.Equal(at.Add(time.Minute)) {
			t.Fatalf("history of %s: %+v", id, h)
		}
	}
	for id, moves := range map[string]int{"done": 1, "draft": 2} {
		if _, err := DeleteDraft(ctx, store, "org1", id, "", at); KindOf(err) != KindWorkflow {
			t.Fatalf("delete %s (past the drafts or deleted already): %v, want a workflow error", id, err)
		}
		if h, _ := store.PaymentHistory(ctx, "org1", id); len(h) != moves {
			t.Fatalf("a refused deletion of %s wrote history: %+v", id, h)
		}
	}
	long := &StoredPayment{OrgID: "org1", Status: StatusCreated, Doc: Payment{ExternalID: "long"}}
	if err := store.CreatePayment(ctx, long, []StatusChange{{Status: StatusCreated, At: at}}); err != nil {
		t.Fatal(err)
	}
	if _, err := DeleteDraft(ctx, store, "org1", "long", strings.Repeat("ж", MaxDeleteComment+1), at); KindOf(err) != KindValidation {
		t.Fatalf("a comment of %d characters: %v, want a validation error", MaxDeleteComment+1, err)
	}
	if sp, err := DeleteDraft(ctx, store, "org1", "long", strings.Repeat("ж", MaxDeleteComment), at); err != nil || sp.Status != StatusDeleted {
		t.Fatalf("a comment of %d characters: %+v %v, want deleted", MaxDeleteComment, sp, err)
	}
	if _, err := DeleteDraft(ctx, store, "org2", "draft", "", at); KindOf(err) != KindDataNotFound {
		t.Fatalf("another organisation's draft: %v, want not found", err)
	}
}

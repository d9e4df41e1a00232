package banking

import (
	"strings"
	"testing"
)

// The webhook's final set is exactly the provider's (reference §12): success
// IMPLEMENTED; failure DELETED, INVALIDEDS, RECALL, REFUSEDBYBANK,
// REFUSEDBYABS, REQUISITEERROR, REFUSED_BY_RZK, FRAUDDENY. Every other
// status of the §6 list is intermediate and never pushed.
func TestIsFinal(t *testing.T) {
	for status, final := range map[string]bool{
		"IMPLEMENTED": true, "DELETED": true, "INVALIDEDS": true, "RECALL": true, "REFUSEDBYBANK": true,
		"REFUSEDBYABS": true, "REQUISITEERROR": true, "REFUSED_BY_RZK": true, "FRAUDDENY": true,
		"CREATED": false, "CHECKERROR": false, "PARTSIGNED": false, "PARTLY_SIGNED": false, "SIGNED": false,
		"DELIVERED": false, "VALIDEDS": false, "ACCEPTED": false, "EXPORTED": false, "ACCEPTED_BY_ABS": false,
		"TRIED": false, "DELAYED": false, "CORRESPONDENT_APPROVE_WAITING": false, "CARD2": false,
		"FRAUDREVIEW": false, "FRAUDSMS": false, "": false, "implemented": false,
	} {
		if got := IsFinal(status); got != final {
			t.Errorf("IsFinal(%q) = %v, want %v", status, got, final)
		}
	}
}

// A bank user deletes drafts only (reference §6): the three statuses before
// the set of signatures is complete. A fully signed document is the bank's
// to process, and a final one has ended; unknown and misspelt statuses are
// never deletable, so a status added later has to be placed here on purpose.
func TestDeletable(t *testing.T) {
	for status, deletable := range map[string]bool{
		"CREATED": true, "CHECKERROR": true, "PARTSIGNED": true,
		"SIGNED": false, "DELIVERED": false, "VALIDEDS": false, "ACCEPTED": false, "EXPORTED": false,
		"ACCEPTED_BY_ABS": false, "IMPLEMENTED": false, "DELETED": false, "INVALIDEDS": false, "RECALL": false,
		"REFUSEDBYBANK": false, "REFUSEDBYABS": false, "REQUISITEERROR": false, "REFUSED_BY_RZK": false,
		"FRAUDDENY": false, "PARTLY_SIGNED": false, "created": false, "": false,
	} {
		if got := Deletable(status); got != deletable {
			t.Errorf("Deletable(%q) = %v, want %v", status, got, deletable)
		}
	}
	// Nothing deletable is final: a deletion never rewrites the outcome a
	// partner's webhook has already been told.
	for _, st := range DeletableStatuses {
		if IsFinal(st) {
			t.Errorf("%s is deletable and final", st)
		}
	}
	if err := NotDeletable("id-1", StatusImplemented); KindOf(err) != KindWorkflow || !strings.Contains(err.Error(), "IMPLEMENTED") {
		t.Errorf("NotDeletable: %v, want a workflow error naming the status", err)
	}
}

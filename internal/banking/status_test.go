package banking

import "testing"

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

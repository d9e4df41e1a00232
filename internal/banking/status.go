package banking

import "slices"

// Payment statuses (reference §6).
const (
	StatusCreated        = "CREATED"
	StatusCheckError     = "CHECKERROR"
	StatusPartSigned     = "PARTSIGNED"
	StatusSigned         = "SIGNED"
	StatusDelivered      = "DELIVERED"
	StatusValidEDS       = "VALIDEDS"
	StatusInvalidEDS     = "INVALIDEDS"
	StatusRequisiteError = "REQUISITEERROR"
	StatusAccepted       = "ACCEPTED"
	StatusExported       = "EXPORTED"
	StatusAcceptedByABS  = "ACCEPTED_BY_ABS"
	StatusImplemented    = "IMPLEMENTED"
	StatusRefusedByBank  = "REFUSEDBYBANK"
	StatusRefusedByABS   = "REFUSEDBYABS"
	StatusRefusedByRZK   = "REFUSED_BY_RZK"
	StatusFraudDeny      = "FRAUDDENY"
	StatusRecall         = "RECALL"
	StatusDeleted        = "DELETED"
)

// finalStatuses are the statuses the webhook pushes (reference §12, §6).
var finalStatuses = []string{StatusImplemented, StatusDeleted, StatusInvalidEDS, StatusRecall, StatusRefusedByBank,
	StatusRefusedByABS, StatusRequisiteError, StatusRefusedByRZK, StatusFraudDeny}

// IsFinal reports whether status ends a payment's life.
func IsFinal(status string) bool { return slices.Contains(finalStatuses, status) }

// ProcessingPath is the sequence a fully signed payment moves through to
// execution (the success line of the reference §6 machine). The sandbox runs
// it at once, so the create response already says IMPLEMENTED (§6, [S]);
// each step is still recorded with its time.
var ProcessingPath = []string{StatusSigned, StatusDelivered, StatusValidEDS, StatusAccepted, StatusExported,
	StatusAcceptedByABS, StatusImplemented}

// Signable reports whether a document in status can still take signatures.
func Signable(status string) bool { return status == StatusCreated || status == StatusPartSigned }

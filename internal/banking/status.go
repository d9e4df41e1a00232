package banking

import (
	"slices"
	"strings"
)

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

// DeletableStatuses are the statuses of a draft a bank user may delete in
// the bank's UI (reference §6, CREATED ─delete─> DELETED): a document not
// yet fully signed — created, failed its checks, or holding one of two
// signatures. Once the set of signatures is complete the bank has taken the
// document into processing, and only the bank's own outcomes end it.
var DeletableStatuses = []string{StatusCreated, StatusCheckError, StatusPartSigned}

// Deletable reports whether a document in status may still be deleted.
func Deletable(status string) bool { return slices.Contains(DeletableStatuses, status) }

// NotDeletable is the refusal to delete a document in status, the same
// words whether the status was read before the deletion or a concurrent
// signer moved the document on while it ran.
func NotDeletable(externalID, status string) error {
	return Errorf(KindWorkflow, "Документ %s в статусе %s нельзя удалить: удалить можно только черновик в статусе %s",
		externalID, status, strings.Join(DeletableStatuses, ", "))
}

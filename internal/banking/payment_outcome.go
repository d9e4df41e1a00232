package banking

import (
	"strings"
	"time"
)

// Requested outcomes: the sandbox and the test contour run a fully signed
// document straight to IMPLEMENTED (ProcessingPath), so without a way to
// ask for it a partner could never see, nor test its handling of, the
// bank's failure finals (reference §6, §12). A marker "outcome:STATUS" in
// the document's purpose (field 24, which its signers sign, so the marker
// cannot be added behind their back) chooses another walk of the §6
// machine for that one document, once its set of signatures is complete,
// at creation or at a later /sign alike. The choice is stateless and
// deterministic: it is read from the stored document each time. In
// production the bank decides, and the text is just text.

// Side-branch statuses of the §6 machine that only a requested outcome
// records; a document passes through them and goes on.
const (
	StatusFraudReview    = "FRAUDREVIEW"
	StatusFraudSMS       = "FRAUDSMS"
	StatusDelayed        = "DELAYED"
	StatusTried          = "TRIED"
	StatusApproveWaiting = "CORRESPONDENT_APPROVE_WAITING"
	StatusCard2          = "CARD2"
)

// outcomeMarkerPrefix starts a marker; outcomeRequested starts the part of
// a failure final's bankComment that names it.
const (
	outcomeMarkerPrefix = "outcome:"
	outcomeRequested    = " (исход запрошен маркером "
)

// outcomeWalk is the walk a marker chooses: the statuses after SIGNED,
// DELIVERED, and for a failure final what the bank says happened.
type outcomeWalk struct {
	steps   []string
	comment string
}

// outcomeWalks are the walks a marker may request, by the status it names.
// Each follows the §6 machine: the e-signature check ends in INVALIDEDS or
// VALIDEDS, bank control after VALIDEDS in REQUISITEERROR or ACCEPTED; the
// bank and the controlling organisation refuse an accepted document; the
// core banking system (ABS) refuses what was exported to it, in place of
// accepting it (ACCEPTED_BY_ABS says it did), so REFUSEDBYABS follows
// EXPORTED; a recall ends a document the ABS accepted but has not executed;
// anti-fraud reviews an accepted document before its export (FRAUDREVIEW)
// and denies it or lets it go on. The non-final side branches pass through
// their status and go on to IMPLEMENTED; CARD2 (waiting for funds) ends
// straight in IMPLEMENTED, as the machine draws it.
var outcomeWalks = map[string]outcomeWalk{
	StatusInvalidEDS:     {[]string{StatusInvalidEDS}, "ЭП недействительна"},
	StatusRequisiteError: {[]string{StatusValidEDS, StatusRequisiteError}, "Ошибка реквизитов: документ не прошёл контроль банка"},
	StatusRefusedByBank:  {[]string{StatusValidEDS, StatusAccepted, StatusRefusedByBank}, "Документ отвергнут банком"},
	StatusRefusedByRZK: {[]string{StatusValidEDS, StatusAccepted, StatusRefusedByRZK},
		"Документ отвергнут контролирующей организацией"},
	StatusRefusedByABS: {[]string{StatusValidEDS, StatusAccepted, StatusExported, StatusRefusedByABS},
		"Документ отвергнут автоматизированной банковской системой"},
	StatusRecall: {[]string{StatusValidEDS, StatusAccepted, StatusExported, StatusAcceptedByABS, StatusRecall},
		"Документ отозван"},
	StatusFraudDeny: {[]string{StatusValidEDS, StatusAccepted, StatusFraudReview, StatusFraudDeny},
		"Документ отклонён антифрод-контролем"},
	StatusFraudReview:    {sideBranch(StatusFraudReview), ""},
	StatusFraudSMS:       {sideBranch(StatusFraudSMS), ""},
	StatusDelayed:        {sideBranch(StatusDelayed), ""},
	StatusTried:          {sideBranch(StatusTried), ""},
	StatusApproveWaiting: {sideBranch(StatusApproveWaiting), ""},
	StatusCard2:          {[]string{StatusValidEDS, StatusAccepted, StatusExported, StatusAcceptedByABS, StatusCard2, StatusImplemented}, ""},
}

// sideBranch is the success walk after DELIVERED with status between
// ACCEPTED and EXPORTED.
func sideBranch(status string) []string {
	return []string{StatusValidEDS, StatusAccepted, status, StatusExported, StatusAcceptedByABS, StatusImplemented}
}

// outcomeMarkers returns the statuses the purpose's markers name: each
// "outcome:" that starts a word (the purpose's start, or after a character
// that is not a Latin letter, digit or underscore), followed by the status
// name up to the next such character. Status names are case-sensitive.
func outcomeMarkers(purpose string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(purpose[i:], outcomeMarkerPrefix)
		if j < 0 {
			return out
		}
		start := i + j
		i = start + len(outcomeMarkerPrefix)
		if start > 0 && wordByte(purpose[start-1]) {
			continue
		}
		end := i
		for end < len(purpose) && wordByte(purpose[end]) {
			end++
		}
		out = append(out, purpose[i:end])
		i = end
	}
}

func wordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// outcomesApply reports whether the contour honours markers: the sandbox
// ("" too) and the test contour, never production.
func (s *PaymentService) outcomesApply() bool {
	return s.Config.Contour == "" || s.Config.Contour == ContourSandbox || s.Config.Contour == ContourTest
}

// requestedOutcome is the status a document's purpose requests, "" for
// none (or in production). A marker that names no walk, or markers that
// name different ones, make outcomeComment's CHECKERROR at creation, so a
// document that reaches signing has at most one valid request.
func (s *PaymentService) requestedOutcome(d *Payment) string {
	if !s.outcomesApply() {
		return ""
	}
	for _, st := range outcomeMarkers(d.Purpose) {
		if _, ok := outcomeWalks[st]; ok {
			return st
		}
	}
	return ""
}

// outcomeComment is the logical-control comment of a purpose whose marker
// cannot be honoured ("" when it can, or carries none, or in production):
// like the sandbox's far-future date it stores the document in CHECKERROR
// whatever the ChecksumMode, naming the marker, so a typo is seen at once
// instead of the document being executed.
func (s *PaymentService) outcomeComment(purpose string) string {
	if !s.outcomesApply() {
		return ""
	}
	markers := outcomeMarkers(purpose)
	for _, st := range markers {
		if _, ok := outcomeWalks[st]; !ok {
			return "назначение платежа: маркер " + outcomeMarkerPrefix + st + " не задаёт исход обработки документа"
		}
	}
	for _, st := range markers[min(1, len(markers)):] {
		if st != markers[0] {
			return "назначение платежа: маркеры " + outcomeMarkerPrefix + markers[0] + " и " + outcomeMarkerPrefix + st +
				" задают разные исходы обработки документа"
		}
	}
	return ""
}

// processingOf is the recorded walk of fully signed d: the walk its
// purpose requests, else the success walk (processing). Every step is at
// now, like the sandbox's success walk; only a failure final has a comment.
func (s *PaymentService) processingOf(d *Payment, now time.Time) []StatusChange {
	st := s.requestedOutcome(d)
	if st == "" {
		return processing(now)
	}
	w := outcomeWalks[st]
	h := make([]StatusChange, 0, 2+len(w.steps))
	h = append(h, StatusChange{Status: StatusSigned, At: now}, StatusChange{Status: StatusDelivered, At: now})
	for _, step := range w.steps {
		h = append(h, StatusChange{Status: step, At: now})
	}
	if w.comment != "" {
		h[len(h)-1].Comment = w.comment + outcomeRequested + outcomeMarkerPrefix + st + " в назначении платежа)"
	}
	return h
}

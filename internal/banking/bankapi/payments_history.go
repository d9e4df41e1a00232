package bankapi

import (
	"net/http"
	"time"

	"partnerapi/internal/banking"
)

// paymentHistoryView is the answer of GET …/payments/{externalId}/history,
// an operation of this service: the provider shows a document's state
// only, but every move the bank's processing made is recorded with its time
// (reference §6), and a partner testing its handling of the intermediate
// statuses (PARTSIGNED, FRAUDREVIEW, DELAYED, …) or of a final's timing
// needs to see them, not only the last one /state names.
type paymentHistoryView struct {
	ExternalID string            `json:"externalId"`
	History    []paymentMoveView `json:"history"`
}

// paymentMoveView is one recorded move: bankComment as in /state (null
// when the bank has none), at in UTC with the precision it was recorded
// with, as a webhook's eventTime.
type paymentMoveView struct {
	BankStatus  string  `json:"bankStatus"`
	BankComment *string `json:"bankComment"`
	At          string  `json:"at"`
}

// paymentHistory answers the document's recorded status moves, oldest
// first, with the access of its /state (any of the four payment scopes,
// the token organisation's documents only).
func (s *server) paymentHistory(w http.ResponseWriter, r *http.Request, p banking.Principal) {
	id, moves, err := s.Payments.HistoryOf(r.Context(), p, r.PathValue("externalId"))
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	out := paymentHistoryView{ExternalID: id, History: make([]paymentMoveView, 0, len(moves))}
	for _, m := range moves {
		v := paymentMoveView{BankStatus: m.Status, At: m.At.UTC().Format(time.RFC3339Nano)}
		if m.Comment != "" {
			c := m.Comment
			v.BankComment = &c
		}
		out.History = append(out.History, v)
	}
	writeJSON(w, http.StatusOK, out)
}

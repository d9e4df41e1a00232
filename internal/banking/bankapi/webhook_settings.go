package bankapi

import (
	"net/http"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// webhookBase is our registration of a partner's final-status webhook: the
// reference (§12) does not publish how a partner registers it.
const webhookBase = "/fintech/api/v1/webhook"

// addWebhookRoutes serves the calling partner's webhook setting and
// delivery log. The partner is the token's client_id: a partner sees and
// changes only its own.
func (s *server) addWebhookRoutes(mux *web.Mux) {
	if s.Webhooks == nil {
		return
	}
	gate := func(op string, h http.HandlerFunc) http.HandlerFunc {
		return s.gatedScope(func() *banking.Gate { return s.Webhooks.Gate }, op, h, anyPaymentScope...)
	}
	mux.HandleFunc("PUT", webhookBase, gate("webhook-set", s.setWebhook))
	mux.HandleFunc("GET", webhookBase, gate("webhook-get", s.getWebhook))
	mux.HandleFunc("DELETE", webhookBase, gate("webhook-delete", s.deleteWebhook))
	mux.HandleFunc("GET", webhookBase+"/deliveries", gate("webhook-deliveries", s.webhookDeliveries))
}

// webhookSetBody is PUT's body; secret is write-only and optional after
// the first call, and format, omitted, keeps the stored one (json when
// none is stored).
type webhookSetBody struct {
	URL    string  `json:"url"`
	Secret *string `json:"secret"`
	Format *string `json:"format"`
}

func (s *server) setWebhook(w http.ResponseWriter, r *http.Request) {
	var b webhookSetBody
	if err := decodeJSONBody(r, &b); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	out, err := s.Webhooks.Set(r.Context(), principalFrom(r.Context()).PartnerID, b.URL, b.Secret, b.Format)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // a generated secret is in the body once
	writeJSON(w, http.StatusOK, out)
}

// deleteWebhook removes the partner's own setting (our extension: the
// reference publishes no registration, §12, and a partner must be able to
// stop webhooks it set): 204 whether or not one was set, as DELETE is
// idempotent. Its events go to the deployment's default URL, if any.
func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.Webhooks.Delete(r.Context(), principalFrom(r.Context()).PartnerID); err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) getWebhook(w http.ResponseWriter, r *http.Request) {
	out, err := s.Webhooks.Get(r.Context(), principalFrom(r.Context()).PartnerID)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// deliveryJSON is one delivery log entry on the wire; bankComment is null
// when the bank has none, as in the webhook body it logs.
type deliveryJSON struct {
	ExternalID    string          `json:"externalId"`
	BankStatus    string          `json:"bankStatus"`
	BankComment   banking.Comment `json:"bankComment"`
	EventTime     string          `json:"eventTime"`
	State         string          `json:"state"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt string          `json:"nextAttemptAt,omitempty"`
	DeliveredAt   string          `json:"deliveredAt,omitempty"`
	LastError     string          `json:"lastError,omitempty"`
	Log           []attemptJSON   `json:"log"`
}

type attemptJSON struct {
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Error      string `json:"error,omitempty"`
	Format     string `json:"format,omitempty"`
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// DeliveriesJSON is the wire form of a delivery log (the API and the CLI
// print the same shape).
func DeliveriesJSON(ds []banking.WebhookDelivery) any {
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		j := deliveryJSON{ExternalID: d.ExternalID, BankStatus: d.BankStatus, BankComment: banking.Comment(d.BankComment), EventTime: rfc3339(d.EventTime),
			State: d.State, Attempts: d.Attempts, NextAttemptAt: rfc3339(d.NextAt), DeliveredAt: rfc3339(d.DeliveredAt),
			LastError: d.LastError, Log: make([]attemptJSON, len(d.Log))}
		for k, a := range d.Log {
			j.Log[k] = attemptJSON{Attempt: a.Attempt, At: rfc3339(a.At), HTTPStatus: a.HTTPStatus, Error: a.Error, Format: a.Format}
		}
		out[i] = j
	}
	return map[string]any{"deliveries": out}
}

func (s *server) webhookDeliveries(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, ok := queryInt(v)
		if !ok || n < 1 || n > 500 {
			s.writePaymentError(w, r, &banking.Error{Kind: banking.KindValidation, Message: "Неверный параметр limit",
				FieldNames: []string{"limit"}, Checks: []string{"целое число от 1 до 500"}})
			return
		}
		limit = n
	}
	ds, err := s.Webhooks.Deliveries(r.Context(), principalFrom(r.Context()).PartnerID, limit)
	if err != nil {
		s.writePaymentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DeliveriesJSON(ds))
}

package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
)

// sandboxDelete is the path of the sandbox deletion of document id.
func sandboxDelete(id string) string { return sandboxPayments + "/" + id + "/delete" }

// createIn creates payOrg's document id with over and checks it lands in
// status, so each deletion below starts from the status it names.
func (e *payEnv) createIn(id, status string, over map[string]any) {
	e.t.Helper()
	if st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, over)); st != 201 || m["bankStatus"] != status {
		e.t.Fatalf("create %s: %d %s, want 201 %s", id, st, raw, status)
	}
}

// A draft in each deletable status (reference §6, CREATED ─delete─>
// DELETED) is deleted over HTTP and answered as GET …/state answers it;
// the deletion is recorded at the service's clock, not the wall clock, so
// its eventTime agrees with the document's other history rows.
func TestSandboxDeleteDrafts(t *testing.T) {
	e := newPayEnv(t)
	for i, c := range []struct {
		status  string
		over    map[string]any
		body    string
		comment any
	}{
		{banking.StatusCreated, nil, `{"comment":"Удалён в CI"}`, "Удалён в CI"},
		// 02 outside a budget payment fails a logical control: CHECKERROR.
		{banking.StatusCheckError, map[string]any{"operationCode": "02"}, "", nil},
		{banking.StatusPartSigned, map[string]any{"digestSignatures": sigs(banking.SandboxCertFirst)}, `{}`, nil},
	} {
		id := newUUID(7100 + i)
		e.createIn(id, c.status, c.over)
		st, m, raw := e.do("POST", sandboxDelete(id), "pay", c.body)
		if st != 200 || m["bankStatus"] != banking.StatusDeleted || m["bankComment"] != c.comment || m["channelInfo"] != "API:p1" {
			t.Fatalf("delete from %s: %d %s", c.status, st, raw)
		}
		if _, _, state := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); state != raw {
			t.Fatalf("delete from %s answered %s, GET …/state %s", c.status, raw, state)
		}
		h, err := e.svc.History(context.Background(), banking.Principal{OrgID: payOrg}, id)
		if err != nil || len(h) == 0 || h[len(h)-1].Status != banking.StatusDeleted || !h[len(h)-1].At.Equal(payNow) {
			t.Fatalf("history after deleting from %s: %+v %v, want DELETED at %s", c.status, h, err, payNow)
		}
	}
}

// Everything a deletion refuses leaves the document as it was: a signed
// document is the domain's WORKFLOW_FAULT (the words of banking.NotDeletable),
// another organisation's document is not found exactly as its GET is, a
// token without PAY_DOC_RU is 403 before anything is read, and a body that
// is not JSON, or a comment past the bound, is 400.
func TestSandboxDeleteRefusals(t *testing.T) {
	e := newPayEnv(t)
	signed, draft := newUUID(7201), newUUID(7202)
	e.createIn(signed, banking.StatusImplemented, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	e.createIn(draft, banking.StatusCreated, nil)
	_, _, getOther := e.do("GET", paymentsBase+"/"+draft, "pay2", "")
	for _, c := range []struct {
		name, id, token, ctype, body string
		status                       int
		cause, says                  string
	}{
		{"signed", signed, "pay", "application/json", `{}`, 400, "WORKFLOW_FAULT", banking.NotDeletable(signed, banking.StatusImplemented).(*banking.Error).Message},
		{"another organisation's", draft, "pay2", "application/json", `{}`, 404, "DATA_NOT_FOUND_EXCEPTION", ""},
		{"unknown", newUUID(7299), "pay", "application/json", `{}`, 404, "DATA_NOT_FOUND_EXCEPTION", ""},
		{"invoice scope", draft, "inv-only", "application/json", `{}`, 403, "ACTION_ACCESS_EXCEPTION", "PAY_DOC_RU"},
		{"card scope", draft, "cards", "application/json", `{}`, 403, "ACTION_ACCESS_EXCEPTION", "PAY_DOC_RU"},
		{"no token", draft, "", "application/json", `{}`, 401, "UNAUTHORIZED", ""},
		{"malformed JSON", draft, "pay", "application/json", `{"comment":`, 400, "DESERIALIZATION_FAULT", ""},
		{"comment not a string", draft, "pay", "application/json", `{"comment":7}`, 400, "DESERIALIZATION_FAULT", "comment"},
		{"a body of another type", draft, "pay", "text/plain", `comment`, 400, "DESERIALIZATION_FAULT", ""},
		// White space JSON does not know is not an empty body.
		{"a body of a vertical tab", draft, "pay", "application/json", "\v", 400, "DESERIALIZATION_FAULT", ""},
		{"a no-break space before the object", draft, "pay", "application/json", "\u00a0{}", 400, "DESERIALIZATION_FAULT", ""},
		{"comment too long", draft, "pay", "application/json", `{"comment":"` + strings.Repeat("я", banking.MaxDeleteComment+1) + `"}`, 400, "VALIDATION_FAULT", "210"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, m, raw := e.doAs(c.id, c.token, c.ctype, c.body)
			if st != c.status || m["cause"] != c.cause || !strings.Contains(raw, c.says) {
				t.Fatalf("%d %s, want %d %s saying %q", st, raw, c.status, c.cause, c.says)
			}
		})
	}
	// Another organisation's document is refused in GET's very words.
	_, _, delOther := e.do("POST", sandboxDelete(draft), "pay2", `{}`)
	var a, b map[string]any
	_ = json.Unmarshal([]byte(getOther), &a)
	_ = json.Unmarshal([]byte(delOther), &b)
	if a["cause"] != b["cause"] || a["message"] != b["message"] {
		t.Fatalf("another organisation's deletion %s, its GET %s", delOther, getOther)
	}
	for id, want := range map[string]string{signed: banking.StatusImplemented, draft: banking.StatusCreated} {
		if _, m, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); m["bankStatus"] != want {
			t.Fatalf("a refused deletion changed %s: %s", id, raw)
		}
	}
	// A comment of exactly the bound is taken.
	if st, m, raw := e.do("POST", sandboxDelete(draft), "pay", `{"comment":"`+strings.Repeat("я", banking.MaxDeleteComment)+`"}`); st != 200 || m["bankStatus"] != banking.StatusDeleted {
		t.Fatalf("a comment of %d characters: %d %s", banking.MaxDeleteComment, st, raw)
	}
}

// doAs is do with the Content-Type of the caller's choice and path the
// sandbox deletion of id.
func (e *payEnv) doAs(id, token, ctype, body string) (int, map[string]any, string) {
	e.t.Helper()
	return e.doTyped("POST", sandboxDelete(id), token, ctype, body)
}

// Outside the sandbox only the bank's users end documents: the route is
// 403 in the test and production contours, in the banking envelope, even
// for a draft of the caller's own organisation and a malformed body, and
// the draft stays a draft.
func TestSandboxDeleteOnlyInTheSandbox(t *testing.T) {
	for _, contour := range []string{banking.ContourTest, banking.ContourProduction} {
		t.Run(contour, func(t *testing.T) {
			e := newPayEnv(t)
			id := newUUID(7301)
			e.createIn(id, banking.StatusCreated, nil)
			e.svc.Config.Contour = contour
			for _, body := range []string{`{}`, `{"comment":`} {
				st, m, raw := e.do("POST", sandboxDelete(id), "pay", body)
				if st != 403 || m["cause"] != "ACTION_ACCESS_EXCEPTION" || m["referenceId"] == nil || !strings.Contains(raw, contour) {
					t.Fatalf("body %s: %d %s, want 403 ACTION_ACCESS_EXCEPTION naming the contour", body, st, raw)
				}
			}
			if _, m, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); m["bankStatus"] != banking.StatusCreated {
				t.Fatalf("a refused deletion changed the draft: %s", raw)
			}
		})
	}
}

// A deletion over HTTP queues the document's final-status webhook in the
// same transaction, so the partner's URL gets exactly one DELETED delivery,
// with the comment and the deletion's time; a second, refused deletion
// queues nothing more.
func TestSandboxDeleteWebhook(t *testing.T) {
	e := newPayEnv(t)
	partner := newWebhookPartner(t, e)
	id := newUUID(7401)
	e.createIn(id, banking.StatusCreated, nil)
	if st, _, raw := e.do("POST", sandboxDelete(id), "pay", `{"comment":"Удалён в CI"}`); st != 200 {
		t.Fatalf("delete: %d %s", st, raw)
	}
	if st, m, raw := e.do("POST", sandboxDelete(id), "pay", `{}`); st != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("delete again: %d %s", st, raw)
	}
	got := partner.drain()
	if len(got) != 1 || got[0]["externalId"] != id || got[0]["bankStatus"] != banking.StatusDeleted ||
		got[0]["bankComment"] != "Удалён в CI" || got[0]["eventTime"] != payNow.Format(time.RFC3339Nano) {
		t.Fatalf("partner got %v, want one DELETED delivery of %s", got, id)
	}
}

// webhookPartner is a partner's webhook endpoint that checks each
// delivery's signature under the secret "s3cret" and keeps its body, with
// the payEnv's outbox dispatched to it on a clock of its own.
type webhookPartner struct {
	t    *testing.T
	disp *banking.WebhookDispatcher
	tick func()
	mu   sync.Mutex
	got  []map[string]any
}

func newWebhookPartner(t *testing.T, e *payEnv) *webhookPartner {
	p := &webhookPartner{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Signature") != WebhookSignature([]byte("s3cret"), body) {
			t.Errorf("webhook not signed with the secret: %s", body)
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		p.mu.Lock()
		p.got = append(p.got, m)
		p.mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	store := e.svc.Store.(*bankingsql.PaymentStore)
	now := payNow
	p.disp = &banking.WebhookDispatcher{Outbox: store, Sender: &WebhookSender{Targets: &banking.Webhooks{Store: store,
		Default: banking.WebhookTarget{URL: srv.URL, Secret: []byte("s3cret")}}, URLs: loopbackURLs},
		BaseBackoff: time.Millisecond, PauseBase: time.Millisecond, Now: func() time.Time { return now }}
	// Each pass moves the dispatcher's clock a second on, past any retry's
	// backoff of a millisecond.
	p.tick = func() { now = now.Add(time.Second) }
	return p
}

// drain runs three outbox passes and returns every delivery so far.
func (p *webhookPartner) drain() []map[string]any {
	for range 3 {
		if _, err := p.disp.RunOnce(context.Background()); err != nil {
			p.t.Fatal(err)
		}
		p.tick()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

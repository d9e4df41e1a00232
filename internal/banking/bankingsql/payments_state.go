package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"partnerapi/internal/banking"
)

var _ banking.PaymentStateReader = (*PaymentStore)(nil)

// crucialHashes remembers the crucialFieldsHash of documents by organisation
// and externalId. A document's signed fields change after it is created
// only while a bank user may edit it (EditPayment) and, for a draft from
// an invoice without a payer, when it is signed (AdvancePaymentDoc). Only
// documents that can no longer change are remembered (settledFields), so
// an entry can never be stale, in this process or another; it only saves
// decoding the stored JSON and rebuilding the digest on every state read.
//
// Each entry holds the digest format its hash was computed in: one process
// uses one format, but the cache must not answer a hash of another format
// if a caller asks in two.
type crucialHashes struct {
	mu sync.Mutex
	m  map[string]crucialHash
}

type crucialHash struct {
	format banking.DigestFormat
	hash   string
}

// crucialHashesMax caps the map; past it the map is emptied and refills
// with the documents that are being read.
const crucialHashesMax = 100_000

func (c *crucialHashes) get(key string, format banking.DigestFormat) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[key]
	return h.hash, ok && h.format == format
}

// settledFields reports whether a document's signed fields are final: a
// payment order's, and a draft from an invoice's once it names its payer
// (completed at signing, banking.DocAdvancer), unless a bank user may
// still edit it (banking.Editable, EditPayment). A document leaves the
// editable statuses for good once it is signed or deleted, so a hash
// remembered after that never goes stale.
func settledFields(sp *banking.StoredPayment) bool {
	return (sp.Kind == banking.KindPayDoc || sp.Doc.PayerAccount != "") && !banking.Editable(sp.Status)
}

func (c *crucialHashes) put(key string, format banking.DigestFormat, hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= crucialHashesMax {
		c.m = make(map[string]crucialHash)
	}
	c.m[key] = crucialHash{format, hash}
}

// PaymentState answers GET …/state from the status columns, without
// decoding the document when its hash in format is known.
func (s *PaymentStore) PaymentState(ctx context.Context, orgID, externalID string, format banking.DigestFormat) (banking.State, error) {
	// The cache is keyed by the text as sent, not the folded key: the two
	// documents of a pair migration 0013 left unfolded (UnfoldedPaymentKeys)
	// share a folded key, and each text names one of them (keyMatch).
	// Another case of one UUID takes an entry of its own, the same hash.
	folded, sent := keyArgs(externalID)
	key := orgID + "\x00" + sent
	var st banking.State
	hash, known := s.hashes.get(key, format)
	var err error
	if known {
		err = s.db.QueryRowContext(ctx, `SELECT status, comment, channel FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent),
			orgID, folded, sent).Scan(&st.BankStatus, (*string)(&st.BankComment), &st.ChannelInfo)
	} else {
		var sp *banking.StoredPayment
		if sp, err = scanPayment(s.db.QueryRowContext(ctx, `SELECT `+paymentCols+` FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent), orgID, folded, sent)); err == nil {
			st.BankStatus, st.BankComment, st.ChannelInfo = sp.Status, banking.Comment(sp.Comment), sp.Channel
			hash = format.CrucialFieldsHash(&sp.Doc)
			if settledFields(sp) {
				s.hashes.put(key, format, hash)
			}
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return banking.State{}, notFound(externalID)
	}
	if err != nil {
		return banking.State{}, fmt.Errorf("payment state: %w", err)
	}
	st.CrucialFieldsHash = hash
	return st, nil
}

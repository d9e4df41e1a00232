package bankingsql

// A batch's document rows nearly always agree on five of their twelve
// columns (kind, status, comment, roles and channel: a sole signature's
// create in one partner channel) and carry one instant as both created_at and
// updated_at. The SQLite driver copies every bound text into a C allocation
// of its own and frees it after the statement, and database/sql checks and
// converts every argument, so those columns cost the single committer about
// as much as the row's document did. sharedPaymentsHead binds them once per
// statement instead and selects the rows' own values from a VALUES list of
// six per row (a co-routine in SQLite's plan, as a multi-row VALUES insert
// is); the stored row is the same.
const (
	sharedPaymentsHead = `INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at) ` +
		`SELECT column1, column2, ?, column3, column4, ?, ?, ?, ?, column5, column5, column6 FROM (VALUES `
	// sharedWalkedHead is the shape of the commonest batch of all, creates
	// by one organisation whose whole walk happened at their creation
	// (sole-signed documents): org_id is bound once as well, and a row's
	// one instant is its created_at, updated_at and walked_at, so a row
	// binds four values instead of six, the org_id's text among those
	// saved.
	sharedWalkedHead = `INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at) ` +
		`SELECT ?, column1, ?, column2, column3, ?, ?, ?, ?, column4, column4, column4 FROM (VALUES `
	// The WHERE clause is SQLite's way to tell ON CONFLICT from a join's
	// ON after a SELECT's FROM.
	sharedPaymentsSkip = `) WHERE true` + paymentsSkip
	sharedPaymentsTail = `) WHERE true` + paymentsTail
)

// paymentRows collects the document rows of batch for insertPayments: in a
// shared shape when every row agrees on the shared columns (four values a
// row when they also share their organisation and were walked when
// created, else six), else twelve values a row. It also returns the statement tail that makes the rows'
// insert return the keys it wrote.
func paymentRows(stmts *batchStatements, batch []*newPayment) (docs rowsInsert, returning string) {
	if shared, ok := sharedPaymentColumns(batch); ok && walkedAtCreationByOne(batch) {
		docs = rowsInsert{stmts: stmts, shape: batchShape{head: sharedWalkedHead, tail: sharedPaymentsSkip, width: 4},
			shared: append([]any{batch[0].sp.OrgID}, shared...)}
		docs.args = make([]any, 0, 4*len(batch))
		for _, p := range batch {
			docs.row(p.key, p.doc, p.sp.Kopecks, p.created)
		}
		return docs, sharedPaymentsTail
	} else if ok {
		docs = rowsInsert{stmts: stmts, shape: batchShape{head: sharedPaymentsHead, tail: sharedPaymentsSkip, width: 6}, shared: shared}
		docs.args = make([]any, 0, 6*len(batch))
		for _, p := range batch {
			docs.row(p.sp.OrgID, p.key, p.doc, p.sp.Kopecks, p.created, p.walkedAt)
		}
		return docs, sharedPaymentsTail
	}
	docs = rowsInsert{stmts: stmts, shape: batchShape{head: paymentsHead, tail: paymentsSkip, width: 12}}
	docs.args = make([]any, 0, 12*len(batch))
	for _, p := range batch {
		sp := p.sp
		docs.row(sp.OrgID, p.key, string(sp.Kind), p.doc, sp.Kopecks, sp.Status, sp.Comment,
			p.roles, sp.Channel, p.created, p.updated, p.walkedAt)
	}
	return docs, paymentsTail
}

// sharedPaymentColumns returns the values of the columns every row of batch
// shares (kind, status, comment, roles, channel, in sharedPaymentsHead's
// order), or false when two rows differ in one of them or a row was updated
// at another instant than it was created.
func sharedPaymentColumns(batch []*newPayment) ([]any, bool) {
	first := batch[0]
	for _, p := range batch {
		if p.updated != p.created || p.sp.Kind != first.sp.Kind || p.sp.Status != first.sp.Status ||
			p.sp.Comment != first.sp.Comment || p.roles != first.roles || p.sp.Channel != first.sp.Channel {
			return nil, false
		}
	}
	sp := first.sp
	return []any{string(sp.Kind), sp.Status, sp.Comment, first.roles, sp.Channel}, true
}

// walkedAtCreationByOne reports whether every document of batch belongs to
// the first one's organisation and was walked at the instant it was
// created (sharedWalkedHead), given that each was updated when created
// (sharedPaymentColumns).
func walkedAtCreationByOne(batch []*newPayment) bool {
	org := batch[0].sp.OrgID
	for _, p := range batch {
		if p.sp.OrgID != org || p.walkedAt == nil || p.walkedAt != p.created {
			return false
		}
	}
	return true
}

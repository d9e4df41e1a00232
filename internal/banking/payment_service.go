package banking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"partnerapi/internal/jsonmsg"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// PaymentStore keeps payment documents, their status history and the
// webhook outbox. Every method is one transaction.
type PaymentStore interface {
	// CreatePayment stores a new document with its status history; a second
	// document with the same (org, externalId) is a KindWorkflow error.
	CreatePayment(ctx context.Context, sp *StoredPayment, history []StatusChange) error
	// GetPayment returns the organisation's document or KindDataNotFound.
	GetPayment(ctx context.Context, orgID, externalID string) (*StoredPayment, error)
	// AdvancePayment moves a document that is still in status from to the
	// last entry of history, recording every entry, and stores roles. A
	// document no longer in from is a KindWorkflow error (a concurrent signer won).
	AdvancePayment(ctx context.Context, orgID, externalID, from string, roles []SignatureRole, history []StatusChange) (*StoredPayment, error)
	// PaymentHistory lists the recorded status moves, oldest first.
	PaymentHistory(ctx context.Context, orgID, externalID string) ([]StatusChange, error)
	// DeletePayment moves a document that is still in a Deletable status
	// to DELETED at at, recording the move with comment and queuing its
	// final-status webhook, in one transaction. A document in any other
	// status, also one a concurrent signer moved on, is NotDeletable and
	// nothing is written; an unknown one is KindDataNotFound.
	DeletePayment(ctx context.Context, orgID, externalID, comment string, at time.Time) (*StoredPayment, error)
	// EditPayment replaces the content of a document still in status from
	// with edit's (a bank user's edit, payment_edit.go): its document,
	// amount, status and comment, its signature roles cleared (they were
	// over the old content), the move recorded in its history, in one
	// transaction. Neither status an edit lands in is final, so no webhook
	// is queued. A document in any other status, also one a concurrent
	// deletion moved on, is NotEditable and nothing is written; an unknown
	// one is KindDataNotFound.
	EditPayment(ctx context.Context, orgID, externalID, from string, edit PaymentEdit) (*StoredPayment, error)
}

// CreateExpecter is an optional part of a PaymentStore that batches
// creates: ExpectCreate announces a create request as soon as it starts, so
// the store's committer may wait briefly for it rather than commit without
// it. The request passes the returned context to CreatePayment and calls
// release when it ends, whether it got that far or not.
type CreateExpecter interface {
	ExpectCreate(ctx context.Context) (context.Context, Releaser)
}

// Releaser ends what was announced: Release is idempotent.
type Releaser interface{ Release() }

// ProcessedCreator is an optional part of a PaymentStore for the common
// create, a fully signed document: CreateProcessed is CreatePayment with
// the history processing(at) (the whole ProcessingPath, every step at at,
// no comments), without the service building those moves for the store to
// recognise again.
type ProcessedCreator interface {
	CreateProcessed(ctx context.Context, sp *StoredPayment, at time.Time) error
}

// PaymentStateReader is an optional fast path of a PaymentStore for GET
// …/state: the status columns and the document's crucialFieldsHash without
// loading and decoding the whole document.
type PaymentStateReader interface {
	// format is the digest format the crucialFieldsHash is computed in.
	PaymentState(ctx context.Context, orgID, externalID string, format DigestFormat) (State, error)
}

// PaymentConfig holds the [I] choices of reference §4–7, each switchable.
type PaymentConfig struct {
	// CheckErrorDaysAhead: a payment order or an invoice draft dated this
	// many days or more after today gets CHECKERROR (sandbox rule, §5.6).
	// 0 means 10; <0 off.
	CheckErrorDaysAhead int
	// SigningHost is prefixed to the signer's link (§4.1).
	SigningHost string
	// SkipBudgetRules turns off the §5.8 logical controls of budget
	// payments (field 101, account routing by drawer status, UIN of statuses
	// 31/33, OKTMO, ЕНП requisites). They are on by default: they apply only
	// to payments into the budget system (IsBudgetPayment), so the spec's
	// sandbox shapes on ordinary payees still pass.
	SkipBudgetRules bool
	// ChecksumFailures places failed check digits and logical controls
	// (INN, account key, UIN, budget rules): "" or ChecksCheckError stores
	// the document in CHECKERROR, ChecksReject answers 400 (§13).
	ChecksumFailures ChecksumMode
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Location is the bank's time zone (--banking-time-zone, the one card
	// limits use); nil means DefaultBankZone. Every document date rule (the
	// 10-day past limit, the future-date CHECKERROR, expirationDate) judges
	// dates against the bank's local date, not UTC's.
	Location *time.Location
	// Contour is sandbox, test or production; "" means sandbox. In the
	// sandbox the §7 magic ids decide QR confirmations; elsewhere the
	// requesting user's signing tool type does (payment_qr.go).
	Contour string
	// Digest is the layout of the digest text (--banking-digest, reference
	// §8 [I]); the zero value is the default. Every digest of the service,
	// and the crucialFieldsHash, follows it.
	Digest DigestFormat
}

// UserLookup finds the user behind a token (an IdentityStore is one).
type UserLookup interface {
	GetUser(ctx context.Context, id string) (User, error)
}

// PaymentService is the payment-document use cases (issue 4).
type PaymentService struct {
	Store    PaymentStore
	Accounts AccountLookup
	Verifier SignatureVerifier
	Config   PaymentConfig
	// Users tells a user's signing tool type, which outside the sandbox
	// decides whether the user may confirm by QR; nil there: nobody may.
	Users UserLookup
	// Payees completes an invoice draft's payee for its requisites QR
	// (st00012_payment.go); nil: the QR carries what the draft names.
	Payees PayeeDirectory
	// Gate is the maintenance switch and rate limit of every payment
	// operation, shared with the API's other services (nil: off).
	Gate *Gate

	// numbers assigns the number of a payment order sent without one
	// (payment_number.go).
	numbers paymentNumbers
}

func (s *PaymentService) now() time.Time {
	if s.Config.Now != nil {
		return s.Config.Now().UTC()
	}
	return time.Now().UTC()
}

// today is the bank's calendar date at now (BankDate in the configured
// zone), the day every document date is judged against.
func (s *PaymentService) today(now time.Time) time.Time {
	return BankDate(now, s.Config.Location)
}

func digestHash(digest string) string { return hexSHA256(digest) }

// hexHash is a crucialFieldsHash as create returns it, in place: a create
// answered as JSON only copies it into the answer, so it needs no string.
type hexHash [2 * sha256.Size]byte

func sha256Hex(b []byte) hexHash {
	sum := sha256.Sum256(b)
	var h hexHash
	hex.Encode(h[:], sum[:])
	return h
}

// Create handles POST /v1/payments: validate, check the payer account is
// the principal's, verify signatures, then store a draft, a CHECKERROR
// document, a PARTSIGNED one or run a fully signed one to its final status:
// IMPLEMENTED, or INVALIDEDS when a signature's certificate is not the
// token user's (reference §9.1, foreignSignatureHistory), or outside
// production the final its purpose's marker requests (payment_outcome.go).
func (s *PaymentService) Create(ctx context.Context, p Principal, d Payment) (*Payment, error) {
	sp, hash, err := s.create(ctx, p, d, nil)
	if err != nil {
		return nil, err
	}
	return s.viewHashed(sp, string(hash[:])), nil
}

// CreateJSON is Create answering the document's wire form as JSON (what
// encoding/json's Encoder writes for the *Payment Create returns). It is
// spliced from the one encoding of the document that is also stored: the
// bank's fields are the last ones of Payment, so appending them to the
// stored JSON gives the same bytes as encoding the whole view again.
func (s *PaymentService) CreateJSON(ctx context.Context, p Principal, d Payment) ([]byte, error) {
	return s.AppendCreateJSON(ctx, nil, p, d)
}

// AppendCreateJSON is CreateJSON appending the answer to dst, so a caller
// that writes it out at once can reuse one buffer for every answer.
//
// With a store that only borrows what its create is handed
// (PaymentBorrower) the stored document and the buffer it is encoded into
// come from a pool and go back to it once the answer is spliced: a create
// allocated a fresh ~900-byte StoredPayment and a kilobyte for its
// encoding, memory that under load no cache holds.
func (s *PaymentService) AppendCreateJSON(ctx context.Context, dst []byte, p Principal, d Payment) ([]byte, error) {
	var sc *createScratch
	if _, ok := s.Store.(PaymentBorrower); ok {
		sc = createScratches.Get().(*createScratch)
	}
	sp, hash, err := s.create(ctx, p, d, sc)
	if err != nil {
		// Not pooled: a create whose context ended may have left the
		// document with a commit still in flight.
		return dst, err
	}
	dst = appendCreatedFields(dst, sp.DocJSON, sp.Status, sp.Comment, &hash)
	if sc != nil {
		if cap(sp.DocJSON) <= maxPooledDoc {
			sc.doc = sp.DocJSON[:0]
		}
		if cap(sc.digest) > maxPooledDoc {
			sc.digest = nil
		}
		sc.sp = StoredPayment{}
		createScratches.Put(sc)
	}
	return dst, nil
}

// PaymentBorrower is a PaymentStore that keeps no reference to the
// StoredPayment its CreatePayment or CreateProcessed is handed, nor to its
// DocJSON, once the create returned nil, so the service may reuse both for
// another document.
type PaymentBorrower interface{ BorrowsPayment() }

// createScratch is what a create for a PaymentBorrower takes from
// createScratches: the stored document, the buffer it is encoded into and
// the one its digest text is built in. maxPooledDoc keeps an unusual
// document's grown buffers out of the pool.
type createScratch struct {
	sp     StoredPayment
	doc    []byte
	digest []byte
}

var createScratches = sync.Pool{New: func() any {
	return &createScratch{doc: make([]byte, 0, 1024), digest: make([]byte, 0, 1024)}
}}

const maxPooledDoc = 16 << 10

// create is Create up to the stored document and its crucialFieldsHash:
// the digest is built once, for the signature check and the hash alike,
// and the document encoded once, for the store and the answer alike; with
// sc, in sc's StoredPayment and buffer.
func (s *PaymentService) create(ctx context.Context, p Principal, d Payment, sc *createScratch) (*StoredPayment, hexHash, error) {
	if e, ok := s.Store.(CreateExpecter); ok {
		var announced Releaser
		ctx, announced = e.ExpectCreate(ctx)
		defer announced.Release()
	}
	// The stored document is the only heap copy of d: it is checked, hashed
	// and encoded in place. Working on d itself would move d to the heap as
	// well (InspectPayment and PaymentDigest take its address), a second
	// copy of ~550 bytes per create.
	var sp *StoredPayment
	if sc != nil {
		sp = &sc.sp
		*sp = StoredPayment{OrgID: p.OrgID, Kind: KindPayDoc, Doc: d}
	} else {
		sp = &StoredPayment{OrgID: p.OrgID, Kind: KindPayDoc, Doc: d}
	}
	doc := &sp.Doc
	now := s.now()
	comment, err := s.verdict(ctx, p, KindPayDoc, doc, now)
	if err != nil {
		return nil, hexHash{}, err
	}
	sigs := doc.DigestSignatures
	doc.DigestSignatures = nil
	doc.BankStatus, doc.BankComment, doc.CrucialFieldsHash, doc.SigningURL = "", "", "", ""
	// With sc the digest text is built in sc's buffer and read in place:
	// the verifier and the hash keep nothing of it, and the buffer is not
	// reused before this create's answer is written.
	var digestText []byte
	if sc != nil {
		sc.digest = s.Config.Digest.appendPayment(sc.digest[:0], doc)
		digestText = sc.digest
	} else {
		digestText = s.Config.Digest.appendPayment(make([]byte, 0, 1024), doc)
	}
	digest := unsafe.String(unsafe.SliceData(digestText), len(digestText))
	var set SignatureSet
	if len(sigs) > 0 {
		var err error
		if set, err = s.Verifier.VerifyDocument(ctx, p, digest, sigs); err != nil {
			return nil, hexHash{}, err
		}
		if !set.Complete() && !set.Partial() {
			return nil, hexHash{}, Errorf(KindWorkflow, "Набор подписей не позволяет исполнить документ: проверьте сертификаты")
		}
	}
	// The bank numbers a payment order sent without a number (reference
	// §4, field 3) after the checks that may refuse it, so a refused
	// create uses up no number (a duplicate externalId, found only by the
	// store, still does: numbers may have gaps). The number is not one of
	// the digest's fields (§8): the digest and the signatures checked
	// above stay as they were.
	if doc.Number == "" {
		var err error
		if doc.Number, err = s.numbers.assign(ctx, s.Store, p.OrgID); err != nil {
			return nil, hexHash{}, err
		}
	}
	sp.Roles, sp.Channel, sp.CreatedAt, sp.UpdatedAt = set.Roles, channel(p), now, now
	sp.Kopecks, _ = doc.Amount.Kopecks()
	if sc != nil {
		sp.DocJSON, err = marshalPaymentTo(sc.doc[:0], doc)
	} else {
		sp.DocJSON, err = MarshalPayment(doc)
	}
	if err != nil {
		return nil, hexHash{}, err
	}
	// One history slice is made, the one that is stored; none for a fully
	// signed document when the store takes its processing walk whole.
	var history []StatusChange
	// A requested outcome (payment_outcome.go) is another walk, written as
	// history rows with its final's webhook, as any other history is.
	walker, walk := s.Store.(ProcessedCreator)
	walk = walk && comment == "" && set.Complete() && set.Foreign == nil && s.requestedOutcome(doc) == ""
	switch {
	case walk:
		sp.Status, sp.Comment = ProcessingPath[len(ProcessingPath)-1], ""
	case comment != "":
		history = []StatusChange{{Status: StatusCheckError, Comment: comment, At: now}}
	case set.Foreign != nil:
		history = foreignSignatureHistory(now, set, "")
	case set.Complete():
		history = s.processingOf(doc, now)
	case set.Partial():
		history = []StatusChange{{Status: StatusCreated, At: now}, {Status: StatusPartSigned, At: now}}
	default:
		history = []StatusChange{{Status: StatusCreated, At: now}}
	}
	if walk {
		err = walker.CreateProcessed(ctx, sp, now)
	} else {
		last := history[len(history)-1]
		sp.Status, sp.Comment = last.Status, last.Comment
		err = s.Store.CreatePayment(ctx, sp, history)
	}
	if err != nil {
		return nil, hexHash{}, err
	}
	return sp, sha256Hex(digestText), nil
}

func channel(p Principal) string { return PartnerChannel(p.PartnerID) }

// foreignSignatureHistory is the recorded life of a document signed with a
// certificate that is not the token user's (reference §9.1: "a token/
// certificate mismatch creates a draft that later becomes INVALIDEDS"). The
// signatures move it as they would (a complete set to SIGNED and DELIVERED,
// one of first/second from a draft to PARTSIGNED), and the bank's
// e-signature check, the step where a valid set gives VALIDEDS, ends it in
// INVALIDEDS (§6 machine: DELIVERED ─> VALIDEDS | INVALIDEDS*), a final
// status with its webhook. Every move happens at now: like the sandbox's
// success walk, processing is not delayed. from is the document's status
// before the signatures, "" for a create: a partly signed new document
// records CREATED first, as it does with valid signatures.
func foreignSignatureHistory(now time.Time, set SignatureSet, from string) []StatusChange {
	var h []StatusChange
	switch {
	case set.Complete():
		h = []StatusChange{{Status: StatusSigned, At: now}, {Status: StatusDelivered, At: now}}
	case from == "":
		h = []StatusChange{{Status: StatusCreated, At: now}, {Status: StatusPartSigned, At: now}}
	case from == StatusCreated:
		h = []StatusChange{{Status: StatusPartSigned, At: now}}
	}
	comment := "ЭП недействительна: сертификат " + jsonmsg.Echo(strings.Join(set.Foreign, ", ")) +
		" не принадлежит пользователю, от имени которого передан документ"
	h = append(h, StatusChange{Status: StatusInvalidEDS, Comment: comment, At: now})
	return h
}

// processing is the recorded walk of a fully signed document to execution.
func processing(now time.Time) []StatusChange {
	h := make([]StatusChange, len(ProcessingPath))
	for i, st := range ProcessingPath {
		h[i] = StatusChange{Status: st, At: now}
	}
	return h
}

func (s *PaymentService) store(ctx context.Context, sp *StoredPayment, history []StatusChange) (*Payment, error) {
	last := history[len(history)-1]
	sp.Status, sp.Comment = last.Status, last.Comment
	if err := s.Store.CreatePayment(ctx, sp, history); err != nil {
		return nil, err
	}
	return s.view(sp), nil
}

// view is the wire form of a stored document.
func (s *PaymentService) view(sp *StoredPayment) *Payment {
	return s.viewHashed(sp, s.Config.Digest.CrucialFieldsHash(&sp.Doc))
}

// viewHashed is view with the document's crucialFieldsHash already known.
func (s *PaymentService) viewHashed(sp *StoredPayment, hash string) *Payment {
	d := sp.Doc
	d.BankStatus, d.BankComment = sp.Status, Comment(sp.Comment)
	d.CrucialFieldsHash = hash
	if sp.Kind != KindPayDoc {
		d.SigningURL = s.SigningURL(d.ExternalID, "")
	}
	return &d
}

// SigningURL is where the partner sends the signer of a draft (§4.1).
func (s *PaymentService) SigningURL(externalID, backURL string) string {
	u := strings.TrimRight(s.Config.SigningHost, "/") + "/ic/ufs/rpp-light/index.html#/payment-creator/" + url.PathEscape(externalID)
	if backURL != "" {
		u += "?backUrl=" + url.QueryEscape(backURL)
	}
	return u
}

// CreateInvoice handles the three from-invoice operations: a draft in
// CREATED (or CHECKERROR for the sandbox's far-future date or a malformed
// departmentalInfo) with the signing link.
func (s *PaymentService) CreateInvoice(ctx context.Context, p Principal, k DocKind, d Payment) (*Payment, error) {
	now := s.now()
	dropDraftPayer(&d)
	comment, err := s.verdict(ctx, p, k, &d, now)
	if err != nil {
		return nil, err
	}
	if k == KindInvoice {
		if err := setOwnPayee(ctx, s.Payees, p, &d); err != nil {
			return nil, err
		}
	}
	// A draft from an invoice carries its number as paymentNumber (§4.1).
	// One sent without it gets the next value of the organisation's durable
	// counter that numbers plain payment orders, for it is the same running
	// document number of the payer organisation; as there, the number is
	// assigned after the checks that may refuse the request, and one sent
	// is kept as it is.
	if d.PaymentNumber == "" {
		var err error
		if d.PaymentNumber, err = s.numbers.assign(ctx, s.Store, p.OrgID); err != nil {
			return nil, err
		}
	}
	d.DigestSignatures = nil
	d.BankStatus, d.BankComment, d.SigningURL = "", "", ""
	sp := &StoredPayment{OrgID: p.OrgID, Kind: k, Doc: d, Channel: channel(p), CreatedAt: now, UpdatedAt: now}
	sp.Kopecks, _ = d.Amount.Kopecks()
	history := []StatusChange{{Status: StatusCreated, At: now}}
	if comment != "" {
		history = []StatusChange{{Status: StatusCheckError, Comment: comment, At: now}}
	}
	return s.store(ctx, sp, history)
}

// verdict is what the checks of a create make of a document of kind k at
// now, and so of a bank user's edit of one (payment_edit.go): a 400 for
// format failures (and for failed check digits and logical controls under
// ChecksReject), a WORKFLOW_FAULT for an account that is not the
// organisation's, else the bankComment of a document stored in CHECKERROR —
// a malformed departmentalInfo, a failed logical control, the sandbox's
// far-future date, an outcome marker outside production that names no walk
// (outcomeComment) — or "" for one that passes. It is the one place both
// decide CHECKERROR, so an edit is judged exactly as its create was.
func (s *PaymentService) verdict(ctx context.Context, p Principal, k DocKind, d *Payment, now time.Time) (string, error) {
	if k == KindPayDoc {
		var findings Findings
		inspectPayment(&findings, d, s.today(now), !s.Config.SkipBudgetRules)
		if err := findings.Err(s.Config.ChecksumFailures); err != nil {
			return "", err
		}
		if err := s.ownPayer(ctx, p, d, findings.failed()); err != nil {
			return "", err
		}
		return joinComments(joinComments(s.futureDateComment(d.Date, now), s.outcomeComment(d.Purpose)), findings.CheckError()), nil
	}
	findings := InspectInvoiceRules(d, k, s.today(now), !s.Config.SkipBudgetRules)
	if err := findings.Err(s.Config.ChecksumFailures); err != nil {
		return "", err
	}
	// Only a draft from the requester's own invoice pays the requester
	// (§4.1): -any drafts pay any payee, -budget drafts a budget payee, whose
	// accounts are at other banks or the treasury, so neither is looked up
	// among the bank's accounts.
	if k == KindInvoice {
		if err := s.ownPayeeAccount(ctx, p, d.PayeeAccount); err != nil {
			return "", err
		}
	}
	return joinComments(joinComments(s.futureDateComment(d.Date, now), s.outcomeComment(d.Purpose)), findings.CheckError()), nil
}

// futureDateComment is the bankComment of a document dated
// CheckErrorDaysAhead days or more after today ("" for any other date): the
// sandbox stores such a document, payment order or invoice draft alike, in
// CHECKERROR (reference §5.6), so a signed one is never executed. It stays
// CHECKERROR whatever the ChecksumMode, like the sandbox's other stored
// refusal, a malformed departmentalInfo. An unparseable date is the
// validation's 400 and never gets here.
func (s *PaymentService) futureDateComment(date string, now time.Time) string {
	days := s.Config.CheckErrorDaysAhead
	if days == 0 {
		days = 10
	}
	if t, ok := ParseDate(date); days < 0 || !ok || t.Before(s.today(now).AddDate(0, 0, days)) {
		return ""
	}
	return "Ошибка в поле date: дата документа не может быть позже текущей более чем на " + itoa(days-1) + " дней"
}

// joinComments joins the bankComment parts that are not empty.
func joinComments(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// Get returns the principal organisation's document.
func (s *PaymentService) Get(ctx context.Context, p Principal, externalID string) (*Payment, error) {
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return nil, err
	}
	return s.view(sp), nil
}

// State returns the document's status (GET …/state).
func (s *PaymentService) State(ctx context.Context, p Principal, externalID string) (State, error) {
	if r, ok := s.Store.(PaymentStateReader); ok {
		return r.PaymentState(ctx, p.OrgID, externalID, s.Config.Digest)
	}
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return State{}, err
	}
	return State{BankStatus: sp.Status, BankComment: Comment(sp.Comment), ChannelInfo: sp.Channel, CrucialFieldsHash: s.Config.Digest.CrucialFieldsHash(&sp.Doc)}, nil
}

// expired reports whether the bank's today is past a draft's
// expirationDate, the day by which the payer is to confirm it (§4.1): from
// the next day it may be neither signed nor confirmed by QR code. The day
// itself still counts, as a payment order's own date does.
func (s *PaymentService) expired(d *Payment) bool {
	exp, ok := ParseDate(d.ExpirationDate)
	return ok && s.today(s.now()).After(exp)
}

// lapsed reports whether a stored document's date is past its 10-day
// validity on the bank's today (DateLapsed, the rule the create applies):
// it may then be neither signed nor confirmed by QR code (§5.6).
func (s *PaymentService) lapsed(d *Payment) bool {
	t, ok := ParseDate(d.Date)
	return ok && DateLapsed(t, s.today(s.now()))
}

// History lists a document's recorded status moves.
func (s *PaymentService) History(ctx context.Context, p Principal, externalID string) ([]StatusChange, error) {
	_, moves, err := s.HistoryOf(ctx, p, externalID)
	return moves, err
}

// HistoryOf is History with the document's externalId as stored, which
// may differ in case from the one asked for (a UUID is matched whatever
// the case of its hex digits).
func (s *PaymentService) HistoryOf(ctx context.Context, p Principal, externalID string) (string, []StatusChange, error) {
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return "", nil, err
	}
	moves, err := s.Store.PaymentHistory(ctx, p.OrgID, externalID)
	return sp.Doc.ExternalID, moves, err
}

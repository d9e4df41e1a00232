package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
)

// scenarioCreateSigned is the create scenario with real signatures: the
// full stack runs in the production contour, where the sandbox's magic
// certificate uuids mean nothing, and every document carries one GOST R
// 34.10-2012 CMS detached signature over its digest text by a certificate
// registered as the user's sole-authority certificate. Each create then
// looks the certificate up, parses it and verifies the signature before the
// document is stored as IMPLEMENTED.
const scenarioCreateSigned = "create-signed"

// The bench's production-contour identity. The ids are fixed rather than
// fresh so that a store kept with --data-dir can be provisioned again on the
// next run: inserts that already happened are skipped. The organisation
// reuses the sandbox's registration numbers and account, whose check digits
// are valid; the production stores are separate from the sandbox's, so
// nothing else claims them there.
const (
	signedBenchOrgID    = "be7c5160-0000-4000-8000-000000000001"
	signedBenchUserID   = "be7c5160-0000-4000-8000-000000000002"
	signedBenchLogin    = "bench-signer"
	signedBenchClientID = "bench-signed-partner"
)

// signedMargin is how many more pre-signed documents a slice gets than the
// last measured rate would use in it; signedFirstMargin is the margin of the
// first slice of a connection count, whose rate comes from the warm-up, a
// colder and shorter run that tends to underestimate it.
const (
	signedMargin      = 1.5
	signedFirstMargin = 2.0
)

// signedScenario is what the create-signed scenario adds to a run: the
// signer, one production-contour full stack per store, and a signed body
// for the bare handler, so that its requests are as long as the targets'.
type signedScenario struct {
	signer     *benchSigner
	targets    []*bankTarget
	sampleBody []byte
	dropSchema func()
}

// startSignedScenario generates the signer and starts the production-contour
// targets: SQLite in dataDir's create-signed subdirectory (its own store, so
// two group committers never share one database file) and, with
// databaseURL, PostgreSQL in a schema of its own.
func startSignedScenario(ctx context.Context, dataDir, databaseURL string, commitDelay time.Duration, newID func() string, date string) (*signedScenario, error) {
	signer, err := newBenchSigner(date)
	if err != nil {
		return nil, err
	}
	s := &signedScenario{signer: signer}
	if s.sampleBody, err = signer.document(newID()); err != nil {
		return nil, err
	}
	sqliteDir := filepath.Join(dataDir, scenarioCreateSigned)
	s.targets = []*bankTarget{{name: "sqlite", open: func(ctx context.Context) (*sqldb.DB, error) { return sqlite.Open(ctx, sqliteDir) }}}
	if databaseURL != "" {
		u, drop, err := benchSchema(ctx, databaseURL)
		if err != nil {
			return nil, err
		}
		s.dropSchema = drop
		s.targets = append(s.targets, &bankTarget{name: "postgres", open: func(ctx context.Context) (*sqldb.DB, error) { return postgres.Open(ctx, u) }})
	}
	for _, t := range s.targets {
		t.commitDelay = commitDelay
		t.signed = &signedFeed{signer: signer, newID: newID}
		if err := t.start(ctx); err != nil {
			s.stop()
			return nil, fmt.Errorf("%s %s: %w", scenarioCreateSigned, t.name, err)
		}
	}
	return s, nil
}

// stop stops the targets and drops the PostgreSQL schema; the targets'
// stores must be verified before. A target whose start failed may have a
// store but no listener yet.
func (s *signedScenario) stop() {
	for _, t := range s.targets {
		switch {
		case t.halt != nil:
			t.stop()
		case t.db != nil:
			_ = t.db.Close()
		}
	}
	if s.dropSchema != nil {
		s.dropSchema()
		s.dropSchema = nil
	}
}

// benchSigner signs the create-signed documents with one GOST R 34.10-2012
// 256-bit key (tc26 paramSetA) and its self-signed certificate, registered
// under uuid in every target's store.
//
// A body is the template's JSON with the document's externalId and its
// signature put in: the pool then holds only each document's id and CMS,
// about half of a whole body, which matters because the bench's GC setting
// (--gc-percent auto, 400) lets the heap grow to five times what is live.
type benchSigner struct {
	key      *gost.PrivateKey
	cert     *gost.Certificate
	uuid     string
	template banking.Payment // the create scenario's document, decoded once
	// The template's JSON before its externalId, between the externalId and
	// the signature's base64Encoded value, and after that value.
	head, middle, tail []byte
}

// The placeholders the template's JSON is cut at.
const (
	templateExternalID = "00000000-0000-4000-8000-000000000000"
	templateSignature  = "BENCH-SIGNATURE-PLACEHOLDER"
)

func newBenchSigner(date string) (*benchSigner, error) {
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	cert, err := gost.SelfSignedCertificate(key, "partnerapi bench signer", now.Add(-time.Hour), now.AddDate(0, 0, 7))
	if err != nil {
		return nil, err
	}
	s := &benchSigner{key: key, cert: cert, uuid: banking.NewUUID()}
	// The sandbox create's text, decoded by the server's own decoder, so
	// both scenarios send the same payment and the digest is built from
	// the fields exactly as the server will read them.
	if !banking.DecodePaymentFast(banking.SandboxPaymentJSON(templateExternalID, date), &s.template) {
		return nil, errors.New("the sandbox payment does not decode")
	}
	doc := s.template
	doc.DigestSignatures = []banking.DigestSignature{{Base64Encoded: templateSignature, CertificateUUID: s.uuid}}
	text, err := banking.MarshalPayment(&doc)
	if err != nil {
		return nil, err
	}
	var rest []byte
	s.head, rest, _ = bytes.Cut(text, []byte(templateExternalID))
	s.middle, s.tail, _ = bytes.Cut(rest, []byte(templateSignature))
	// The cut must give the server's own encoding of a signed document, or
	// the digest the server builds would not be the one signed.
	const id = "be7c5160-0000-4000-8000-0000000000ff"
	cms, err := s.signature(id)
	if err != nil {
		return nil, err
	}
	doc.ExternalID = id
	doc.DigestSignatures[0].Base64Encoded = base64.StdEncoding.EncodeToString(cms)
	if want, err := banking.MarshalPayment(&doc); err != nil || !bytes.Equal(s.body(id, cms), want) {
		return nil, fmt.Errorf("the signed payment's template does not reproduce its encoding (%v)", err)
	}
	return s, nil
}

// signature returns the CMS detached signature of the document with
// externalId id over its digest text, as a partner's signer makes it.
func (s *benchSigner) signature(id string) ([]byte, error) {
	doc := s.template
	doc.ExternalID = id
	return gost.SignDetached([]byte(banking.PaymentDigest(&doc)), s.cert, s.key)
}

// body returns the JSON of the create with externalId id carrying the
// signature cms.
func (s *benchSigner) body(id string, cms []byte) []byte {
	b := make([]byte, 0, len(s.head)+len(id)+len(s.middle)+base64.StdEncoding.EncodedLen(len(cms))+len(s.tail))
	b = append(append(append(b, s.head...), id...), s.middle...)
	b = base64.StdEncoding.AppendEncode(b, cms)
	return append(b, s.tail...)
}

// document returns the body of a create with externalId id, signed.
func (s *benchSigner) document(id string) ([]byte, error) {
	cms, err := s.signature(id)
	if err != nil {
		return nil, err
	}
	return s.body(id, cms), nil
}

// provision registers the bench's organisation, account, user, partner app
// and the signer's certificate in db through the identity store, as
// `partnerapi banking org create`, `account add`, `user create`, `app
// create` and `cert add --role SOLE` do, and issues an access token with the
// payments scope.
func (s *benchSigner) provision(ctx context.Context, db *sqldb.DB) (banking.TokenPair, error) {
	store := bankingsql.NewIdentityStore(db)
	org := banking.Organisation{ID: signedBenchOrgID, Name: "ООО «Бенчмарк»", FullName: "Общество с ограниченной ответственностью «Бенчмарк»",
		INN: banking.SandboxOrgINN, KPP: banking.SandboxOrgKPP, OGRN: banking.SandboxOrgOGRN}
	account := banking.Account{Number: banking.SandboxAccount, OrgID: signedBenchOrgID, BIC: banking.SandboxBIC, CorrAccount: banking.SandboxCorrAccount,
		Currency: "810", Name: "Расчётный счёт", Status: banking.AccountOpen, OpenDate: "2024-01-01"}
	if err := errors.Join(org.Validate(), account.Validate()); err != nil {
		return banking.TokenPair{}, cliErr(err)
	}
	steps := []func() error{
		func() error { return store.CreateOrg(ctx, org) },
		func() error { return store.AddAccount(ctx, account) },
		func() error {
			return store.CreateUser(ctx, banking.User{ID: signedBenchUserID, OrgID: signedBenchOrgID, Login: signedBenchLogin, Name: "Петров Пётр Петрович"})
		},
		func() error {
			secret := banking.NewClientSecret()
			return store.CreateApp(ctx, banking.PartnerApp{ClientID: signedBenchClientID, Name: "Bench partner", SecretHash: banking.HashSecret(secret)})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil && !errors.Is(err, banking.ErrDuplicate) {
			return banking.TokenPair{}, fmt.Errorf("provision: %w", err)
		}
	}
	cert := banking.Certificate{UUID: s.uuid, UserID: signedBenchUserID, DER: s.cert.Raw, Issuer: s.cert.Issuer,
		Serial: s.cert.SerialHex, TypeName: "SMS", Role: banking.RoleSoleAuthority, Active: true}
	if err := store.AddCertificate(ctx, cert); err != nil {
		return banking.TokenPair{}, fmt.Errorf("provision certificate: %w", err)
	}
	return banking.NewIdentity(store).IssueTokens(ctx, signedBenchClientID, signedBenchOrgID, signedBenchUserID, []string{banking.ScopePayDocRU})
}

// checkCreate sends one signed create through net/http before any load and
// wants it IMPLEMENTED, so a signature the server refuses fails the run at
// once with the server's own message rather than as a column of errors.
func (f *signedFeed) checkCreate(ctx context.Context, t *bankTarget) error {
	id := f.newID()
	body, err := f.signer.document(id)
	if err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", t.url+"/fintech/api/v1/payments", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !bytes.Contains(answer, []byte(`"bankStatus":"IMPLEMENTED"`)) {
		return fmt.Errorf("signed create: status %d: %s", resp.StatusCode, bytes.TrimSpace(answer))
	}
	t.acked = append(t.acked, id)
	return nil
}

// signedFeed hands one target its pre-signed documents. Signing is the
// partner's work, not the server's, and costs tens of microseconds of CPU a
// document, which the load generator would otherwise take from the server on
// the same cores, so it happens between the timed slices, never in them: before each slice the feed signs as many documents as the last
// measured rate would send in the slice, with a margin. Every externalId is
// sent once; a feed that runs dry ends the slice early and counts one error
// instead of sending an id again. The documents a slice sent are dropped
// after it, so the feed holds at most about one slice's worth.
type signedFeed struct {
	signer *benchSigner
	newID  func() string

	docs   []signedDoc  // signed documents; those before next were sent
	next   atomic.Int64 // index of the next document to send
	ranDry atomic.Bool  // a goroutine of the current run found no document left
	conns  int          // the connection count rate was measured at
	rate   float64      // acknowledged creates per second in the last run at conns
}

type signedDoc struct {
	id  string
	cms []byte // its CMS signature; the body is built as it is sent
}

// load runs one slice of scenario op against t; create-signed takes its
// documents from t's feed, the other scenarios build theirs as they go.
func (t *bankTarget) load(ctx context.Context, op string, conns int, slice time.Duration, newID func() string, date string) loadResult {
	if op == scenarioCreateSigned {
		return t.signed.slice(ctx, t, conns, slice)
	}
	return runLoad(ctx, conns, slice, func() error { return t.call(op, newID, date) })
}

// slice is one timed slice of create-signed at conns connections. The
// first slice at a connection count is preceded by a warm-up whose only
// purpose is the rate that sizes the slice's documents: a fixed number of
// documents, sent as fast as they are answered for at most a second (or the
// slice, if shorter); what it leaves unsent goes to the slice.
func (f *signedFeed) slice(ctx context.Context, t *bankTarget, conns int, d time.Duration) loadResult {
	margin := signedMargin
	if f.conns != conns {
		f.conns, margin = conns, signedFirstMargin
		if err := f.sign(max(2000, 16*conns)); err != nil {
			return loadResult{errs: 1, firstErr: err, elapsed: d}
		}
		warm := f.run(ctx, t, conns, min(d, time.Second))
		if warm.ok == 0 {
			return loadResult{errs: 1, firstErr: fmt.Errorf("warm-up: no create answered 201: %w", warm.firstErr), elapsed: d}
		}
		f.rate = warm.rps()
	}
	if err := f.sign(int(math.Ceil(f.rate*d.Seconds()*margin)) + 2*conns); err != nil {
		return loadResult{errs: 1, firstErr: err, elapsed: d}
	}
	have := len(f.docs)
	res := f.run(ctx, t, conns, d)
	if f.ranDry.Load() {
		res.errs++
		res.firstErr = errors.Join(res.firstErr, fmt.Errorf("%s: all %d pre-signed documents were sent %v into a %v slice (expected %.0f/s); the slice stopped early rather than send an externalId twice",
			scenarioCreateSigned, have, res.elapsed.Round(time.Millisecond), d, f.rate))
	}
	if res.ok > 0 {
		f.rate = res.rps()
	}
	return res
}

// run sends the feed's documents to t from conns connections for d or
// until they run out.
func (f *signedFeed) run(ctx context.Context, t *bankTarget, conns int, d time.Duration) loadResult {
	docs := f.docs
	f.ranDry.Store(false)
	return runLoad(ctx, conns, d, func() error {
		i := f.next.Add(1) - 1
		if i >= int64(len(docs)) {
			f.ranDry.Store(true)
			return errStopLoad
		}
		return t.createSigned(docs[i])
	})
}

// sign drops the documents already sent and signs new ones until n are
// waiting, on every core: nothing is being measured meanwhile.
func (f *signedFeed) sign(n int) error {
	sent := min(int(f.next.Load()), len(f.docs))
	f.docs = slices.Clone(f.docs[sent:]) // a fresh array, so the sent bodies can be collected
	f.next.Store(0)
	from := len(f.docs)
	if from >= n {
		return nil
	}
	f.docs = append(f.docs, make([]signedDoc, n-from)...)
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := from + w; i < len(f.docs); i += workers {
				id := f.newID()
				cms, err := f.signer.signature(id)
				if err != nil {
					errs[w] = err
					return
				}
				f.docs[i] = signedDoc{id: id, cms: cms}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		f.docs = f.docs[:from]
		return fmt.Errorf("sign documents: %w", err)
	}
	return nil
}

// createSigned sends one pre-signed create; its externalId is remembered for
// the durability check once it was answered 201. The body is built here,
// as the create scenario builds its own, so both load generators do alike.
func (t *bankTarget) createSigned(d signedDoc) error {
	body := t.signed.signer.body(d.id, d.cms)
	if err := rawExpect(t.client, rawPost(t.client, "/fintech/api/v1/payments", t.token, body), 201); err != nil {
		return err
	}
	t.mu.Lock()
	t.acked = append(t.acked, d.id)
	t.mu.Unlock()
	return nil
}

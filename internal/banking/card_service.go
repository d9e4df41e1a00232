package banking

import (
	"context"
	"fmt"
	"partnerapi/internal/jsonmsg"
	"time"
)

// CardsConfig is the card area's settings.
type CardsConfig struct {
	Contour  string         // sandbox | test | production; "" means sandbox
	Location *time.Location // bank time zone for limit expiry; nil means Europe/Moscow
	// JWSRequired says whether a partner (client_id) must sign card-limit
	// requests with a JWS; nil: nobody must.
	JWSRequired func(partnerID string) bool
	JWSReversed bool // signature byte layout switch (reference §9.6 [I])
	Now         func() time.Time
	// Digest is the layout of the limit application's digest text
	// (--banking-digest, reference §8 [I]), the one payments use.
	Digest DigestFormat
}

// Cards is the business-card service: listing, limit applications, the
// sandbox clock. It is free of HTTP and SQL.
type Cards struct {
	// Gate is the maintenance switch and rate limit of the card
	// operations, the API's one Gate (nil: off).
	Gate *Gate

	store    CardStore
	cfg      CardsConfig
	verifier SignatureVerifier
	jws      *JWSVerifier
	offers   OfferChecker
	wall     func() time.Time
}

// NewCards builds the service. verifier may be nil only where no request
// carries signatures (they are then refused with SIGN_CHECK_EXCEPTION).
func NewCards(store CardStore, cfg CardsConfig, verifier SignatureVerifier, certs JWSCertificates) (*Cards, error) {
	if cfg.Contour == "" {
		cfg.Contour = ContourSandbox
	}
	switch cfg.Contour {
	case ContourSandbox, ContourTest, ContourProduction:
	default:
		return nil, fmt.Errorf("banking: unknown contour %q", cfg.Contour)
	}
	if cfg.Location == nil {
		loc, err := time.LoadLocation(DefaultBankZone)
		if err != nil {
			return nil, fmt.Errorf("banking: bank time zone: %w", err)
		}
		cfg.Location = loc
	}
	wall := cfg.Now
	if wall == nil {
		wall = time.Now
	}
	return &Cards{store: store, cfg: cfg, verifier: verifier, jws: NewJWSVerifier(cfg.Contour, cfg.JWSReversed, certs), wall: wall}, nil
}

// UseOffers makes the service ask o (IDENTITY's offer records) which
// accounts a partner signed the offer on, instead of the card area's own list.
func (c *Cards) UseOffers(o OfferChecker) { c.offers = o }

func (c *Cards) inOffer(ctx context.Context, p Principal, account string) (bool, error) {
	if c.offers != nil {
		return c.offers.OfferSigned(ctx, p.PartnerID, account)
	}
	return c.store.InOffer(ctx, p.PartnerID, p.OrgID, account)
}

// offerAccounts is the organisation's card accounts that are in the
// principal partner's offer; an organisation has few accounts.
func (c *Cards) offerAccounts(ctx context.Context, p Principal) ([]string, error) {
	all, err := c.store.CardAccounts(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range all {
		ok, err := c.inOffer(ctx, p, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// OrgAccountLister lists an organisation's accounts at the bank; IDENTITY's
// store is one. An OfferChecker that is also one lets the offer check see
// the organisation's accounts without cards too.
type OrgAccountLister interface {
	ListAccounts(ctx context.Context, orgID string) ([]Account, error)
}

// errNoOffer is the refusal of a partner that signed no offer on any of the
// organisation's accounts (reference §11, §13: 403 without offer). A partner
// with an offer on some of them is answered as usual, and a card outside
// its offer is the card's own 400.
func errNoOffer() error {
	return Errorf(KindForbidden, "Партнёр не подписал оферту ни по одному счёту организации")
}

// OrgOfferReader is an optional part of a CardStore: its own offer list
// (used without an OfferChecker) answers whether a partner signed the offer
// on any of an organisation's accounts, including accounts without cards.
type OrgOfferReader interface {
	AnyOffer(ctx context.Context, partnerID, orgID string) (bool, error)
}

// anyOffer reports whether the principal's partner signed the offer on any
// account of the organisation: its card accounts and, when the offer
// records can list them, its other accounts.
func (c *Cards) anyOffer(ctx context.Context, p Principal) (bool, error) {
	if r, ok := c.store.(OrgOfferReader); ok && c.offers == nil {
		return r.AnyOffer(ctx, p.PartnerID, p.OrgID)
	}
	accounts, err := c.store.CardAccounts(ctx, p.OrgID)
	if err != nil {
		return false, err
	}
	if l, ok := c.offers.(OrgAccountLister); ok {
		all, err := l.ListAccounts(ctx, p.OrgID)
		if err != nil {
			return false, err
		}
		for _, a := range all {
			accounts = append(accounts, a.Number)
		}
	}
	for _, a := range accounts {
		ok, err := c.inOffer(ctx, p, a)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// LimitSettingReader is an optional part of a CardStore: the organisations
// whose setting for card limits through the API is off (reference §11: an
// application is then 400 WORKFLOW_FAULT). A store without it has the
// setting on for every organisation.
type LimitSettingReader interface {
	CardLimitsOff(ctx context.Context, orgID string) (bool, error)
}

// errLimitsOff is the refusal of an application while the organisation's
// limit setting is off (reference §11).
func errLimitsOff() error {
	return Errorf(KindWorkflow, "Установка лимитов по бизнес-картам через API выключена в настройках организации")
}

// Store exposes the store for provisioning (CLI, seed).
func (c *Cards) Store() CardStore { return c.store }

// CardPage is one page of the card list.
type CardPage struct {
	Cards   []CardView
	Page    int
	HasNext bool
}

// List returns page (from 1) of the principal organisation's cards on
// accounts where the principal's partner signed the offer, in a stable order
// (by card id), optionally only with the given statuses.
func (c *Cards) List(ctx context.Context, p Principal, page int, statuses []CardStatus) (CardPage, error) {
	if page < 1 {
		return CardPage{}, &Error{Kind: KindValidation, Message: "Номер страницы начинается с 1",
			FieldNames: []string{"page"}, Checks: []string{"page >= 1"}}
	}
	for _, s := range statuses {
		if !s.Valid() {
			return CardPage{}, &Error{Kind: KindValidation, Message: fmt.Sprintf("Неизвестный статус карты %q", jsonmsg.Echo(string(s))),
				FieldNames: []string{"statusCodes"}, Checks: []string{"ACTIVE|BLOCKED|TO_BE_REISSUED|TO_BE_BLOCKED|NOT_DELIVERED"}}
		}
	}
	accounts, err := c.offerAccounts(ctx, p)
	if err != nil {
		return CardPage{}, err
	}
	if len(accounts) == 0 {
		// No card account is in the offer: either the partner has an offer
		// on accounts without cards (an empty list) or none at all (403).
		switch ok, err := c.anyOffer(ctx, p); {
		case err != nil:
			return CardPage{}, err
		case !ok:
			return CardPage{}, errNoOffer()
		}
		return CardPage{Page: page, Cards: []CardView{}}, nil
	}
	// A page this far out is empty; its offset must not overflow. It is
	// answered after the offer check, so a partner without an offer gets
	// its 403 on every page.
	if page > 1<<20 {
		return CardPage{Page: page, Cards: []CardView{}}, nil
	}
	// One extra row tells whether a next page exists without a COUNT.
	cards, err := c.store.ListCards(ctx, CardFilter{OrgID: p.OrgID, Accounts: accounts, Statuses: statuses,
		Offset: (page - 1) * CardsPerPage, Limit: CardsPerPage + 1})
	if err != nil {
		return CardPage{}, err
	}
	out := CardPage{Page: page, HasNext: len(cards) > CardsPerPage}
	if out.HasNext {
		cards = cards[:CardsPerPage]
	}
	now, err := c.Now(ctx, p.OrgID)
	if err != nil {
		return CardPage{}, err
	}
	out.Cards = make([]CardView, 0, len(cards))
	for _, card := range cards {
		lim, err := c.effective(ctx, card, now)
		if err != nil {
			return CardPage{}, err
		}
		out.Cards = append(out.Cards, card.View(lim))
	}
	return out, nil
}

func (c *Cards) effective(ctx context.Context, card Card, now time.Time) (*CardLimit, error) {
	applied, err := c.store.CardLimits(ctx, card.OrgID, card.ID)
	if err != nil {
		return nil, err
	}
	return EffectiveLimit(applied, now), nil
}

// CardWithLimit returns a card (masked) with the limit in force now.
func (c *Cards) CardWithLimit(ctx context.Context, orgID, id string) (CardView, error) {
	card, err := c.store.Card(ctx, orgID, id)
	if err != nil {
		return CardView{}, err
	}
	now, err := c.Now(ctx, orgID)
	if err != nil {
		return CardView{}, err
	}
	lim, err := c.effective(ctx, card, now)
	if err != nil {
		return CardView{}, err
	}
	return card.View(lim), nil
}

// cardTakesLimit checks that the principal may set a limit on the card now:
// its partner's offer covers the card's account, the organisation's limit
// setting is on and the card's status takes a limit.
func (c *Cards) cardTakesLimit(ctx context.Context, p Principal, cardID string) error {
	// The offer is looked at in full only when the card alone does not
	// settle the answer, so an ordinary application costs no extra reads: a
	// partner without any offer is refused with 403 whether or not the card
	// exists, and one whose offer leaves out the card's account gets 400.
	card, err := c.store.Card(ctx, p.OrgID, cardID)
	if KindOf(err) == KindCardNotFound {
		if ok, oerr := c.anyOffer(ctx, p); oerr != nil {
			return oerr
		} else if !ok {
			return errNoOffer()
		}
	}
	if err != nil {
		return err
	}
	ok, err := c.inOffer(ctx, p, card.AccountNumber)
	if err != nil {
		return err
	}
	if !ok {
		if offered, err := c.anyOffer(ctx, p); err != nil {
			return err
		} else if !offered {
			return errNoOffer()
		}
		return errCardOutsideOffer(card.ID)
	}
	// The setting is the organisation's, so it is looked at once the
	// partner, its offer and the card are known: a partner without an
	// offer keeps its 403 and an unknown card its 404 (reference §11 does
	// not order the refusals; these depend on the request, the setting on
	// the organisation alone).
	if r, ok := c.store.(LimitSettingReader); ok {
		if off, err := r.CardLimitsOff(ctx, p.OrgID); err != nil {
			return err
		} else if off {
			return errLimitsOff()
		}
	}
	if !card.Status.TakesLimit() {
		return Errorf(KindWorkflow, "Карте в статусе %s нельзя установить лимит", card.Status)
	}
	return nil
}

// SetLimit accepts a limit application (already parsed by
// ParseLimitChange). Without signatures it is stored as CREATED; with a
// complete signature set it is EXPORTED and in force at once; one of
// first/second makes it PARTSIGNED.
func (c *Cards) SetLimit(ctx context.Context, p Principal, l LimitChange, channel string) (LimitChange, error) {
	if err := c.cardTakesLimit(ctx, p, l.BusinessCardID); err != nil {
		return LimitChange{}, err
	}
	now, err := c.Now(ctx, p.OrgID)
	if err != nil {
		return LimitChange{}, err
	}
	l.BankStatus = LimitCreated
	if len(l.DigestSignatures) > 0 {
		if c.verifier == nil {
			return LimitChange{}, Errorf(KindSignCheck, "Проверка подписи недоступна")
		}
		set, err := c.verifier.Verify(ctx, p, c.cfg.Digest.Limit(l), l.DigestSignatures)
		if err != nil {
			return LimitChange{}, err
		}
		switch {
		case set.Complete():
			l.BankStatus, l.ExportedAt = LimitExported, now
		case set.Partial():
			l.BankStatus = LimitPartSigned
		}
		l.Roles = set.Roles
	}
	l.OrgID, l.PartnerID, l.ChannelInfo, l.CreatedAt = p.OrgID, p.PartnerID, channel, now
	if l.Date == "" {
		l.Date = now.In(c.cfg.Location).Format("2006-01-02")
	}
	l.ExpiresAt = LimitExpiry(string(l.Limit), now, c.cfg.Location)
	// Reference §11 answers the application with its number, which the
	// bank gives one sent without (as a payment order's, §4); the store
	// draws it with the insert.
	number, err := c.store.CreateLimit(ctx, l)
	if err != nil {
		return LimitChange{}, err
	}
	l.Number = number
	return l, nil
}

// LimitState reports an application's status. A partner without any
// offer is refused (403, reference §11 and §13) whether or not the
// application exists, as the list, the create and the signing refuse it:
// without that check its applications' states were the one card answer a
// partner with no offer could still read.
func (c *Cards) LimitState(ctx context.Context, p Principal, externalID string) (LimitState, error) {
	l, err := c.store.Limit(ctx, p.OrgID, externalID)
	if err != nil && KindOf(err) != KindDataNotFound {
		return LimitState{}, err
	}
	if ok, oerr := c.anyOffer(ctx, p); oerr != nil {
		return LimitState{}, oerr
	} else if !ok {
		return LimitState{}, errNoOffer()
	}
	if err != nil {
		return LimitState{}, err
	}
	// A partner whose offer leaves out the card's account neither lists
	// the card nor files or signs an application on it, so it does not
	// read the state of one another partner filed either: it gets the
	// card's refusal, as the create and the sign answer it.
	card, err := c.store.Card(ctx, p.OrgID, l.BusinessCardID)
	if err != nil {
		return LimitState{}, err
	}
	if ok, err := c.inOffer(ctx, p, card.AccountNumber); err != nil {
		return LimitState{}, err
	} else if !ok {
		return LimitState{}, errCardOutsideOffer(card.ID)
	}
	return LimitState{BankStatus: l.BankStatus, BankComment: l.BankComment, ChannelInfo: l.ChannelInfo}, nil
}

// errCardOutsideOffer is the refusal of a card whose account is not in the
// partner's offer while others are (reference §11: 400 WORKFLOW_FAULT).
func errCardOutsideOffer(cardID string) error {
	return Errorf(KindWorkflow, "Счёт карты %s не входит в оферту партнёра", cardID)
}

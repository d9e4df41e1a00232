package banking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// CardStatus is a business card's state (reference §11).
type CardStatus string

const (
	CardActive       CardStatus = "ACTIVE"
	CardBlocked      CardStatus = "BLOCKED"
	CardToBeReissued CardStatus = "TO_BE_REISSUED"
	CardToBeBlocked  CardStatus = "TO_BE_BLOCKED"
	CardNotDelivered CardStatus = "NOT_DELIVERED"
)

// CardStatuses lists every status, in the order the seed cycles through them.
var CardStatuses = []CardStatus{CardActive, CardBlocked, CardToBeReissued, CardToBeBlocked, CardNotDelivered}

// Valid reports whether s is a known status.
func (s CardStatus) Valid() bool {
	for _, v := range CardStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// TakesLimit reports whether a limit may be set on a card in this status.
func (s CardStatus) TakesLimit() bool { return s == CardActive || s == CardNotDelivered }

// CardsPerPage is the business-cards page size fixed by the reference.
const CardsPerPage = 100

// Card is a business card of an organisation's account. PAN and holder name
// are stored whole (the bank needs them) and leave this package only through
// the masked forms of CardView.
type Card struct {
	ID             string
	OrgID          string
	AccountNumber  string
	BIC            string
	PAN            string
	HolderName     string
	HolderBirthday string // YYYY-MM-DD
	ExpiryDate     string // YYYY-MM-DD, the card is valid through this day
	Status         CardStatus
	EmbossedText   string
	CardType       string
}

// Validate checks a card before it is stored (CLI, seed). Its id is
// bounded in characters as a limit application's businessCardId is, so
// that every stored card can be named by an application.
func (c Card) Validate() error {
	switch {
	case strings.TrimSpace(c.ID) == "" || utf8.RuneCountInString(c.ID) > maxLimitText:
		return fmt.Errorf("card id: 1..64 characters")
	case !c.Status.Valid():
		return fmt.Errorf("card status %q: want one of %v", c.Status, CardStatuses)
	case len(strings.ReplaceAll(c.PAN, " ", "")) < 12 || strings.Trim(strings.ReplaceAll(c.PAN, " ", ""), "0123456789") != "":
		return fmt.Errorf("card PAN: 12..19 digits")
	case !isDate(c.ExpiryDate):
		return fmt.Errorf("card expiry %q: want YYYY-MM-DD", c.ExpiryDate)
	case c.HolderBirthday != "" && !isDate(c.HolderBirthday):
		return fmt.Errorf("cardholder birthday %q: want YYYY-MM-DD", c.HolderBirthday)
	case c.AccountNumber == "":
		return fmt.Errorf("card account: required")
	}
	return nil
}

// isDate reports whether s is a calendar date written YYYY-MM-DD.
func isDate(s string) bool {
	_, ok := ParseDate(s)
	return ok
}

// CardView is the wire form of a card: the only shape in which a card leaves
// the service, so an unmasked PAN cannot be written by accident.
type CardView struct {
	BusinessCardID     string      `json:"businessCardId"`
	CardExpiredDate    string      `json:"cardExpiredDate,omitempty"`
	CardholderName     string      `json:"cardholderName,omitempty"`
	CardPan            string      `json:"cardPan,omitempty"`
	Status             string      `json:"status"`
	AccountNumber      string      `json:"accountNumber,omitempty"`
	BankBic            string      `json:"bankBic,omitempty"`
	EmbossedText       string      `json:"embossedText,omitempty"`
	CardholderBirthday string      `json:"cardholderBirthday,omitempty"`
	CardType           string      `json:"cardType,omitempty"`
	EffectiveLimit     json.Number `json:"effectiveLimit,omitempty"`
	LimitExpiresAt     string      `json:"limitExpiresAt,omitempty"`
}

// View masks the card for output. lim is the limit in force now, if any.
func (c Card) View(lim *CardLimit) CardView {
	v := CardView{BusinessCardID: c.ID, CardExpiredDate: c.ExpiryDate, CardholderName: MaskName(c.HolderName),
		CardPan: MaskPAN(c.PAN), Status: string(c.Status), AccountNumber: c.AccountNumber, BankBic: c.BIC,
		EmbossedText: c.EmbossedText, CardholderBirthday: c.HolderBirthday, CardType: c.CardType}
	if lim != nil {
		v.EffectiveLimit = json.Number(lim.Amount)
		if !lim.ExpiresAt.IsZero() {
			v.LimitExpiresAt = lim.ExpiresAt.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// MaskPAN keeps the first six and last four digits, as card receipts do;
// short or odd values are masked entirely rather than half-exposed.
func MaskPAN(pan string) string {
	pan = strings.ReplaceAll(pan, " ", "")
	if len(pan) < 12 {
		return strings.Repeat("*", len(pan))
	}
	return pan[:6] + strings.Repeat("*", len(pan)-10) + pan[len(pan)-4:]
}

// MaskName keeps the first letter of each word: "IVAN PETROV" → "I*** P*****".
func MaskName(name string) string {
	words := strings.Fields(name)
	for i, w := range words {
		r := []rune(w)
		words[i] = string(r[:1]) + strings.Repeat("*", len(r)-1)
	}
	return strings.Join(words, " ")
}

// CardFilter selects a page of cards of one organisation on the given
// accounts (the ones where the partner's offer is signed).
type CardFilter struct {
	OrgID    string
	Accounts []string     // empty: no cards
	Statuses []CardStatus // empty: all
	Offset   int
	Limit    int
}

// CardStore keeps cards, offer accounts, limit applications and the sandbox
// clock. Implemented by bankingsql.CardStore.
type CardStore interface {
	InsertCard(ctx context.Context, c Card) error
	Card(ctx context.Context, orgID, id string) (Card, error) // KindCardNotFound when absent
	ListCards(ctx context.Context, f CardFilter) ([]Card, error)
	SetCardStatus(ctx context.Context, orgID, id string, s CardStatus) error
	// CardAccounts lists the distinct accounts the organisation has cards on.
	CardAccounts(ctx context.Context, orgID string) ([]string, error)
	// AddOfferAccount and InOffer keep the card area's own offer list, used
	// when no OfferChecker (IDENTITY's offer records) is wired.
	AddOfferAccount(ctx context.Context, partnerID, orgID, account string) error
	InOffer(ctx context.Context, partnerID, orgID, account string) (bool, error)
	// CreateLimit stores an application and returns its number: the
	// partner's, or, when it sent none, the organisation's next card-limit
	// number (1, 2, …), taken in the transaction that stores the
	// application, so a refused one uses none up. A duplicate externalId
	// of the organisation, or a card that no longer takes a limit, gives
	// KindWorkflow.
	CreateLimit(ctx context.Context, l LimitChange) (number string, err error)
	Limit(ctx context.Context, orgID, externalID string) (LimitChange, error) // KindDataNotFound when absent
	// CardLimits returns the card's applied (EXPORTED) limits, the one that
	// came into force last (ExportedAt) first.
	CardLimits(ctx context.Context, orgID, cardID string) ([]LimitChange, error)
	// SignLimit stores l's new status, roles, signatures, ExpiresAt and
	// ExportedAt over an application whose stored status and roles are
	// still fromStatus and fromRoles, compared and set at once: when they
	// changed (a concurrent signature applied first) it is KindWorkflow and
	// nothing is written; an application coming into force (EXPORTED)
	// whose card no longer takes a limit is KindWorkflow too.
	SignLimit(ctx context.Context, l LimitChange, fromStatus string, fromRoles []SignatureRole) error
	// ClockOffset is the sandbox clock's offset for an organisation: the
	// shared offset plus the organisation's own; orgID "" is the shared
	// one alone.
	ClockOffset(ctx context.Context, orgID string) (time.Duration, error)
	// AddClockOffset moves the shared offset, every organisation's clock.
	AddClockOffset(ctx context.Context, d time.Duration) error
	// AddOrgClockOffset moves one organisation's own offset.
	AddOrgClockOffset(ctx context.Context, orgID string, d time.Duration) error
}

// OfferChecker answers whether a partner application signed the offer on an
// account; IDENTITY's store implements it.
type OfferChecker interface {
	OfferSigned(ctx context.Context, clientID, account string) (bool, error)
}

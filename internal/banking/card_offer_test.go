package banking

import (
	"context"
	"slices"
	"testing"
	"time"
)

// offerCards is a CardStore with two cards, one on each of two accounts,
// and no offer list of its own: the offers come from offerBook.
type offerCards struct{ CardStore }

func (offerCards) Card(_ context.Context, orgID, id string) (Card, error) {
	switch id {
	case "c1":
		return Card{ID: id, OrgID: orgID, AccountNumber: "A1", Status: CardActive}, nil
	case "c2":
		return Card{ID: id, OrgID: orgID, AccountNumber: "A2", Status: CardActive}, nil
	}
	return Card{}, Errorf(KindCardNotFound, "no card %s", id)
}

func (offerCards) CardAccounts(context.Context, string) ([]string, error) {
	return []string{"A1", "A2"}, nil
}

func (offerCards) ListCards(_ context.Context, f CardFilter) ([]Card, error) {
	var out []Card
	for _, a := range f.Accounts {
		out = append(out, Card{ID: "c-" + a, OrgID: f.OrgID, AccountNumber: a, Status: CardActive})
	}
	return out, nil
}

func (offerCards) CardLimits(context.Context, string, string) ([]LimitChange, error) { return nil, nil }

func (offerCards) CreateLimit(context.Context, LimitChange) (string, error) { return "1", nil }

// offerBook is IDENTITY's offer records: the accounts each partner signed
// the offer on, and the organisation's accounts (A3 has no cards).
type offerBook map[string][]string

func (o offerBook) OfferSigned(_ context.Context, clientID, account string) (bool, error) {
	return slices.Contains(o[clientID], account), nil
}

func (offerBook) ListAccounts(context.Context, string) ([]Account, error) {
	return []Account{{Number: "A1"}, {Number: "A2"}, {Number: "A3"}}, nil
}

// Without a signed offer on any of the organisation's accounts both card
// operations are forbidden (§11, §13); an offer on some account, even one
// without cards, turns the refusal of a card outside it into the card's
// own workflow fault.
func TestCardsOfferScope(t *testing.T) {
	ctx := context.Background()
	cards, err := NewCards(offerCards{}, CardsConfig{Contour: ContourTest, Location: time.UTC}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cards.UseOffers(offerBook{"full": {"A1"}, "cardless": {"A3"}})
	for _, tc := range []struct {
		partner, card string
		list, limit   Kind // KindInternal: no error
		listed        int
	}{
		{"full", "c1", KindInternal, KindInternal, 1},
		{"full", "c2", KindInternal, KindWorkflow, 1},
		{"full", "c9", KindInternal, KindCardNotFound, 1},
		{"cardless", "c1", KindInternal, KindWorkflow, 0},
		{"cardless", "c9", KindInternal, KindCardNotFound, 0},
		{"none", "c1", KindForbidden, KindForbidden, 0},
		{"none", "c9", KindForbidden, KindForbidden, 0},
	} {
		p := Principal{OrgID: "org", PartnerID: tc.partner}
		page, err := cards.List(ctx, p, 1, nil)
		if err != nil && KindOf(err) != tc.list || err == nil && tc.list != KindInternal || len(page.Cards) != tc.listed {
			t.Errorf("%s: list %d cards, %v; want %d and kind %v", tc.partner, len(page.Cards), err, tc.listed, tc.list)
		}
		_, err = cards.SetLimit(ctx, p, LimitChange{Code: "NON_RENEW", BusinessCardID: tc.card, ExternalID: "e", Limit: "1"}, "API")
		if err != nil && KindOf(err) != tc.limit || err == nil && tc.limit != KindInternal {
			t.Errorf("%s on %s: limit %v, want kind %v", tc.partner, tc.card, err, tc.limit)
		}
	}
}

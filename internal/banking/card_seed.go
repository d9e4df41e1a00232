package banking

import (
	"context"
	"fmt"
)

// SandboxCardCount is how many cards the sandbox organisation gets.
const SandboxCardCount = 250

// SeedSandboxCards gives the sandbox organisation SandboxCardCount cards
// spread over accounts, cycling through every status, and records the offer
// on offerAccounts only, so cards on the other accounts exist but are
// invisible to the partner (the "no offer" path). Idempotent: an existing
// card or offer row is left as it is.
func SeedSandboxCards(ctx context.Context, s CardStore, orgID, partnerID, bic string, offerAccounts, otherAccounts []string) error {
	for _, a := range offerAccounts {
		if err := s.AddOfferAccount(ctx, partnerID, orgID, a); err != nil {
			return err
		}
	}
	all := append(append([]string{}, offerAccounts...), otherAccounts...)
	if len(all) == 0 {
		return fmt.Errorf("banking: seed cards: no accounts")
	}
	for i := 0; i < SandboxCardCount; i++ {
		c := SandboxCard(orgID, bic, all[i%len(all)], i)
		if _, err := s.Card(ctx, orgID, c.ID); err == nil {
			continue
		} else if KindOf(err) != KindCardNotFound {
			return err
		}
		if err := s.InsertCard(ctx, c); err != nil {
			// Another process starting on the same database inserted it
			// between the look-up and the insert: seeded all the same.
			if _, gerr := s.Card(ctx, orgID, c.ID); gerr == nil {
				continue
			}
			return err
		}
	}
	return nil
}

var sandboxNames = []string{"IVAN PETROV", "MARIA IVANOVA", "OLEG SMIRNOV", "ANNA KUZNETSOVA", "PAVEL POPOV"}

// SandboxCard is the i-th deterministic sandbox card. PANs use the 2200
// (Mir) range with a valid Luhn digit so partner validators accept them.
func SandboxCard(orgID, bic, account string, i int) Card {
	body := fmt.Sprintf("220220%09d", 100000000+i)
	return Card{
		ID:             fmt.Sprintf("sbc-%05d", i+1),
		OrgID:          orgID,
		AccountNumber:  account,
		BIC:            bic,
		PAN:            body + luhnDigit(body),
		HolderName:     sandboxNames[i%len(sandboxNames)],
		HolderBirthday: fmt.Sprintf("19%02d-%02d-%02d", 60+i%40, 1+i%12, 1+i%28),
		ExpiryDate:     fmt.Sprintf("20%02d-%02d-28", 27+i%5, 1+i%12),
		Status:         CardStatuses[i%len(CardStatuses)],
		EmbossedText:   "SANDBOX LLC",
		CardType:       []string{"MIR_BUSINESS", "VISA_BUSINESS"}[i%2],
	}
}

func luhnDigit(s string) string {
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return fmt.Sprint((10 - sum%10) % 10)
}

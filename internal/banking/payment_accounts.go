package banking

import (
	"context"
	"errors"
)

// IdentityAccounts answers AccountLookup from the identity area's store, so
// the payments area never reads identity tables itself.
type IdentityAccounts struct{ Store IdentityStore }

func (a IdentityAccounts) AccountOrg(ctx context.Context, account string) (string, bool, error) {
	acc, err := a.Store.GetAccount(ctx, account)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return acc.OrgID, true, nil
}

// AccountHolder reads the account and its organisation: two reads of the
// identity store, the account's from its cache.
func (a IdentityAccounts) AccountHolder(ctx context.Context, account string) (AccountHolder, bool, error) {
	acc, err := a.Store.GetAccount(ctx, account)
	if errors.Is(err, ErrNotFound) {
		return AccountHolder{}, false, nil
	}
	if err != nil {
		return AccountHolder{}, false, err
	}
	org, err := a.Store.GetOrg(ctx, acc.OrgID)
	if err != nil {
		return AccountHolder{}, false, err
	}
	return AccountHolder{OrgID: acc.OrgID, OrgINN: org.INN, BIC: acc.BIC, CorrAccount: acc.CorrAccount}, true, nil
}

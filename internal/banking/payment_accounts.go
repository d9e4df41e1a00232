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

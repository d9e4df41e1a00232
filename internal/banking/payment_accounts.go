package banking

import (
	"context"
	"errors"
)

// AccountLookup tells which organisation holds an account at the bank.
type AccountLookup interface {
	AccountOrg(ctx context.Context, account string) (orgID string, found bool, err error)
	// AccountHolder is AccountOrg with what a payment order from the
	// account must say about its payer: the organisation's INN and the
	// account's bank.
	AccountHolder(ctx context.Context, account string) (h AccountHolder, found bool, err error)
}

// AccountHolder is an account of the bank as its payment orders name it.
type AccountHolder struct {
	OrgID, OrgINN    string
	BIC, CorrAccount string // CorrAccount "" when the bank's record has none
	// State is the account's state (reference §10): AccountOpen,
	// AccountBlocked or AccountClosed; "" for a record made before states
	// were kept, which counts as open.
	State string
	// Currency is the account's ISO numeric currency ("810" for roubles);
	// "" where the record names none, which counts as roubles.
	Currency string
}

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
	return AccountHolder{OrgID: acc.OrgID, OrgINN: org.INN, BIC: acc.BIC, CorrAccount: acc.CorrAccount, State: acc.Status, Currency: acc.Currency}, true, nil
}

// payerAccountState refuses a payment from an account that is blocked or
// closed: the bank debits only an open account, so such a document must be
// neither executed nor left to be signed (reference §10 account states,
// §13 WORKFLOW_FAULT for account details the bank cannot act on). The
// refusal names payerAccount and the state. A payment order in roubles is
// debited from a rouble account alone, so an account the bank keeps in
// another currency is refused the same way, whatever its number's digits
// 6–8 say (checkAccount reads those).
func payerAccountState(account string, h AccountHolder) error {
	if !rubleCurrency(h.Currency) {
		return Errorf(KindWorkflow, "Счёт %s (payerAccount) в валюте %s: рублёвое платёжное поручение списывается только с рублёвого счёта", account, h.Currency)
	}
	if h.State == "" || h.State == AccountOpen {
		return nil
	}
	return Errorf(KindWorkflow, "Счёт %s (payerAccount) в состоянии %s: списание с него невозможно", account, h.State)
}

// rubleCurrency reports whether an account record's currency is the
// rouble: ISO 4217's 643, or 810, the code Russian account numbers and the
// bank's records still carry for it; "" (a record that names none) counts
// as roubles.
func rubleCurrency(c string) bool { return c == "" || c == "810" || c == "643" }

// ownPayeeAccount requires the payee account of a draft from the
// requester's own invoice (/from-invoice) to be held by the principal's
// organisation and not closed: nothing is credited to a closed account. A
// blocked one still receives (the bank's account modes answer it as
// ONLY_RECEIVING), and a non-rouble one cannot take a rouble payment.
func (s *PaymentService) ownPayeeAccount(ctx context.Context, p Principal, account string) error {
	h, found, err := s.Accounts.AccountHolder(ctx, account)
	if err != nil {
		return err
	}
	if !found || h.OrgID != p.OrgID {
		return notOwnAccount(account, "payeeAccount")
	}
	if h.State == AccountClosed {
		return Errorf(KindWorkflow, "Счёт %s (payeeAccount) в состоянии %s: зачисление на него невозможно", account, h.State)
	}
	if !rubleCurrency(h.Currency) {
		return Errorf(KindWorkflow, "Счёт %s (payeeAccount) в валюте %s: рублёвый платёж на него не зачисляется", account, h.Currency)
	}
	return nil
}

// signablePayer is the payer check of a stored document about to be
// signed or confirmed: its payer account may have been blocked or closed,
// or taken from the organisation, since the document was made. A draft
// without a payer account yet (an invoice draft the signer completes) has
// nothing to check here.
func (s *PaymentService) signablePayer(ctx context.Context, p Principal, d *Payment) error {
	if d.PayerAccount == "" {
		return nil
	}
	h, found, err := s.Accounts.AccountHolder(ctx, d.PayerAccount)
	if err != nil {
		return err
	}
	if !found || h.OrgID != p.OrgID {
		return notOwnAccount(d.PayerAccount, "payerAccount")
	}
	return payerAccountState(d.PayerAccount, h)
}

// notOwnAccount is the one refusal of an account that is not the caller
// organisation's, whether the bank holds it for another organisation or
// does not know it at all: two answers would let a tenant probe which
// account numbers exist at the bank and are held by somebody else.
func notOwnAccount(account, field string) error {
	return Errorf(KindWorkflow, "Счёт %s (%s) не найден среди счетов организации клиента", account, field)
}

// ownPayer requires the payer account to be held by the principal's
// organisation and open (payerAccountState), and the payer's details to be what the bank knows of it
// (reference §13: unknown org/account/bank details are a WORKFLOW_FAULT):
// payerInn the organisation's INN, payerBankBic and payerBankCorrAccount
// the account's bank. The names are not compared: an organisation's name is
// written in more than one accepted form (short or full, quotes, a branch
// added). A budget payment's payerInn is not compared either: paying a tax
// for a third party, field 60 carries that party's INN, or 0 for a person
// without one (§5.8, statuses 13 and 24). A document that failed its own
// check digits or logical controls (checked) is not compared: it is stored
// in CHECKERROR, or refused, for them already, and a wrong key of the payer
// account names the field as the checks placed it.
func (s *PaymentService) ownPayer(ctx context.Context, p Principal, d *Payment, checked bool) error {
	h, found, err := s.Accounts.AccountHolder(ctx, d.PayerAccount)
	if err != nil {
		return err
	}
	if !found || h.OrgID != p.OrgID {
		return notOwnAccount(d.PayerAccount, "payerAccount")
	}
	if err := payerAccountState(d.PayerAccount, h); err != nil {
		return err
	}
	if checked {
		return nil
	}
	switch {
	case d.PayerINN != h.OrgINN && !IsBudgetPayment(d):
		return Errorf(KindWorkflow, "ИНН плательщика %s (payerInn) не совпадает с ИНН организации клиента", d.PayerINN)
	case d.PayerBankBIC != h.BIC:
		return Errorf(KindWorkflow, "БИК %s (payerBankBic) не совпадает с БИК банка счёта плательщика %s", d.PayerBankBIC, d.PayerAccount)
	case h.CorrAccount != "" && d.PayerBankCorrAccount != h.CorrAccount:
		return Errorf(KindWorkflow, "Корсчёт %s (payerBankCorrAccount) не совпадает с корсчётом банка счёта плательщика %s", d.PayerBankCorrAccount, d.PayerAccount)
	}
	return nil
}

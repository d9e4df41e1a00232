package banking

import (
	"context"
	"errors"
	"strings"
)

// DocAdvancer is the part of a PaymentStore that signs a draft whose payer
// the signer completes (an invoice draft, §4.1): AdvancePayment that also
// replaces the stored document with doc, its JSON (MarshalPayment), in the
// same transaction.
type DocAdvancer interface {
	AdvancePaymentDoc(ctx context.Context, orgID, externalID, from string, doc []byte, roles []SignatureRole, history []StatusChange) (*StoredPayment, error)
}

// completeDraftPayer fills the payer of a draft from an invoice at its
// signing. The provider's signer completes such a draft in the bank's
// interface, choosing the account to pay from (reference §4.1); our sign
// operation takes that account as payerAccount instead: an account of the
// signing principal's organisation, open, with the other payer details
// (name, INN, KPP, the account's bank) from the bank's records, so the
// signer cannot misstate them. A draft that names its payer already keeps
// it (a payerAccount sent must then be that one); a draft without a payer
// and a request without payerAccount is refused, for the bank would not
// know whose money to move. It reports whether the document changed.
func (s *PaymentService) completeDraftPayer(ctx context.Context, p Principal, d *Payment, account string) (bool, error) {
	if d.PayerAccount != "" {
		if account != "" && account != d.PayerAccount {
			return false, Errorf(KindWorkflow, "Плательщик документа уже указан: счёт %s (payerAccount), передан %s", d.PayerAccount, account)
		}
		return false, nil
	}
	if account == "" {
		return false, Errorf(KindWorkflow, "Черновик по счёту подписывается со счётом плательщика: укажите payerAccount, счёт организации, с которого платить")
	}
	d.PayerAccount = account
	if err := s.signablePayer(ctx, p, d); err != nil {
		return false, err
	}
	h, _, err := s.Accounts.AccountHolder(ctx, account) // found and owned: signablePayer checked both
	if err != nil {
		return false, err
	}
	d.PayerINN, d.PayerBankBIC, d.PayerBankCorrAccount = h.OrgINN, h.BIC, h.CorrAccount
	if s.Payees != nil {
		org, err := s.Payees.GetOrg(ctx, p.OrgID)
		if err != nil {
			return false, err
		}
		d.PayerName, d.PayerKPP = org.Name, org.KPP
	}
	if len(d.PayerINN) == 12 {
		// A sole proprietor has no KPP (§5.2).
		d.PayerKPP = ""
	}
	if enpPayerKPPZero(d) {
		d.PayerKPP = "0"
	}
	return true, nil
}

// dropDraftPayer clears the payer of a draft from an invoice as it is
// created or corrected. Such a draft names no payer (§4.1: its signer
// completes it, here through /sign's payerAccount, completeDraftPayer), and
// the from-invoice bodies have no payer members, so ones sent are dropped
// like any other unknown member. Kept, they made the draft one that
// "names its payer": /sign took them as they were, a made-up payerInn and
// payerName and no payer bank, and executed the document with them.
func dropDraftPayer(d *Payment) {
	d.PayerName, d.PayerINN, d.PayerKPP = "", "", ""
	d.PayerAccount, d.PayerBankBIC, d.PayerBankCorrAccount = "", "", ""
}

// setOwnPayee sets the payee of a draft from the requester's own invoice
// (/from-invoice, KindInvoice) from the bank's records: the account's bank
// and the organisation's name, INN and KPP. Such a draft pays the
// requester's own account (§4.1, whose body names payeeAccount alone, and
// verdict has checked it is the principal's), so what the request said of
// the payee is replaced, as completeDraftPayer replaces the payer: kept,
// unchecked payee details (an INN failing its check digit, a BIC that is
// not the account's bank) were signed and executed, and a draft that sent
// none was executed with no payee bank. Without a directory (dir nil) the
// draft keeps what it was sent.
func setOwnPayee(ctx context.Context, dir PayeeDirectory, p Principal, d *Payment) error {
	if dir == nil {
		return nil
	}
	acct, err := dir.GetAccount(ctx, d.PayeeAccount)
	if errors.Is(err, ErrNotFound) || err == nil && acct.OrgID != p.OrgID {
		return notOwnAccount(d.PayeeAccount, "payeeAccount") // taken away since verdict looked
	}
	if err != nil {
		return err
	}
	org, err := dir.GetOrg(ctx, p.OrgID)
	if err != nil {
		return err
	}
	d.PayeeName, d.PayeeINN, d.PayeeKPP = org.Name, org.INN, org.KPP
	d.PayeeBankBIC, d.PayeeBankCorrAccount = acct.BIC, acct.CorrAccount
	if len(d.PayeeINN) == 12 {
		d.PayeeKPP = "" // a sole proprietor has no KPP (§5.2)
	}
	return nil
}

// payerAccountFormat refuses a payerAccount sent to /sign or GET …/digest
// that is not 20 digits (reference §4's ^[0-9]{20}$) as what it is, a
// pattern failure, 400 VALIDATION_FAULT (§13), before any document is read:
// looked up as an account, it was answered WORKFLOW_FAULT, the refusal of a
// well-formed account of another organisation, which sent a client
// chasing the wrong problem. "" (no account sent) passes.
func payerAccountFormat(account string) error {
	if account == "" || len(account) == 20 && allDigits(account) {
		return nil
	}
	return &Error{Kind: KindValidation, Message: "Объект не соответствует модели",
		FieldNames: []string{"payerAccount"}, Checks: []string{"счёт плательщика: 20 цифр"}}
}

// enpPayerKPPZero reports whether a legal entity's single tax payment dated
// from 2026-04-01 carries payer KPP 0 (order 58n, §5.2; checkBudgetPayerKPP
// holds the rule and its exemption for foreign organisations).
func enpPayerKPPZero(d *Payment) bool {
	date, ok := ParseDate(d.Date)
	return ok && !date.Before(payerKPP58nStart) && IsENPPayment(d) && len(d.PayerINN) == 10 &&
		!strings.HasPrefix(d.PayerINN, "9909")
}

// advanceSigned records a signing's moves: the document itself too when its
// payer was completed (DocAdvancer), its status and roles only otherwise.
func (s *PaymentService) advanceSigned(ctx context.Context, p Principal, externalID string, sp *StoredPayment, completed bool,
	roles []SignatureRole, history []StatusChange) (*StoredPayment, error) {
	if !completed {
		return s.Store.AdvancePayment(ctx, p.OrgID, externalID, sp.Status, roles, history)
	}
	da, ok := s.Store.(DocAdvancer)
	if !ok {
		return nil, Errorf(KindInternal, "хранилище не сохраняет плательщика черновика")
	}
	doc, err := MarshalPayment(&sp.Doc)
	if err != nil {
		return nil, err
	}
	return da.AdvancePaymentDoc(ctx, p.OrgID, externalID, sp.Status, doc, roles, history)
}

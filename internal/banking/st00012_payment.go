package banking

import (
	"context"
	"errors"
	"strconv"
)

// bankNames is the short name of each bank whose BIC the service itself
// knows: the sandbox bank that holds the clients' accounts and the
// treasury division that receives the single tax payment (§5.8). The
// treasury's full name ("…//УФК по Тульской области г Тула", 57
// characters) does not fit BankName's 45, so the division's own name is
// kept, which is what the payer's bank shows beside the BIC anyway.
var bankNames = map[string]string{
	SandboxBIC:  "ПАО СБЕРБАНК",
	ENPPayeeBIC: "ОТДЕЛЕНИЕ ТУЛА БАНКА РОССИИ",
}

// BankNameByBIC names the bank of bic for the QR's mandatory BankName. A
// payment document stores no bank name and the service has no directory
// of Russian banks, so a BIC it does not know is named "БИК <bic>": the
// payer's bank routes by the BIC, which the payload carries as well, and a
// label that says what it is beats an invented name or no QR at all.
func BankNameByBIC(bic string) string {
	if n, ok := bankNames[bic]; ok {
		return n
	}
	return "БИК " + bic
}

// st00012Source names the payment field each key is filled from, so a
// value the QR cannot carry is reported against the document's field.
var st00012Source = map[string]string{
	"Name": "payeeName", "PersonalAcc": "payeeAccount", "BankName": "payeeBankBic", "BIC": "payeeBankBic",
	"CorrespAcc": "payeeBankCorrAccount", "PayeeINN": "payeeInn", "KPP": "payeeKpp", "Sum": "amount",
	"Purpose": "purpose", "PayerINN": "payerInn",
	"DrawerStatus": "departmentalInfo.drawerStatus101", "CBC": "departmentalInfo.kbk",
	"OKTMO": "departmentalInfo.oktmo", "PaytReason": "departmentalInfo.reasonCode106",
	"TaxPeriod": "departmentalInfo.taxPeriod107", "DocNo": "departmentalInfo.docNumber108",
	"DocDate": "departmentalInfo.docDate109", "UIN": "departmentalInfo.uip",
}

// PaymentST00012 builds the requisites QR payload of a payment document or
// invoice draft (§14): the payee's requisites, the amount in kopecks and
// the purpose, and for a budget payment (IsBudgetPayment) the payer's INN
// and fields 101, 104–109 and 22. The additional keys follow the order of
// the reference's example (PayeeINN, KPP, Sum, Purpose), then the budget
// keys in field order. Empty values are left out, and so are a UIN of
// `0` (the payment order's "no UIN") and field 110, unused since 2015. A
// value the QR cannot carry is a VALIDATION_FAULT naming the field.
func PaymentST00012(d *Payment) (string, error) {
	kopecks, ok := d.Amount.Kopecks()
	if !ok || kopecks <= 0 {
		return "", &Error{Kind: KindValidation, Message: "Невозможно сформировать QR-код с реквизитами платежа",
			FieldNames: []string{"amount"}, Checks: []string{"сумма должна быть положительным числом с не более чем двумя знаками после точки"}}
	}
	corr := d.PayeeBankCorrAccount
	if corr == "" {
		corr = "0" // §14: a payee bank without a correspondent account
	}
	bankName := ""
	if d.PayeeBankBIC != "" {
		bankName = BankNameByBIC(d.PayeeBankBIC)
	}
	fields := []ST00012Field{
		{"Name", d.PayeeName}, {"PersonalAcc", d.PayeeAccount}, {"BankName", bankName},
		{"BIC", d.PayeeBankBIC}, {"CorrespAcc", corr},
	}
	add := func(k, v string) {
		if v != "" {
			fields = append(fields, ST00012Field{k, v})
		}
	}
	add("PayeeINN", d.PayeeINN)
	add("KPP", d.PayeeKPP)
	add("Sum", strconv.FormatInt(kopecks, 10))
	add("Purpose", d.Purpose)
	if di := d.DepartmentalInfo; di != nil && IsBudgetPayment(d) {
		add("PayerINN", d.PayerINN)
		add("DrawerStatus", di.DrawerStatus101)
		add("CBC", di.KBK)
		add("OKTMO", di.OKTMO)
		add("PaytReason", di.ReasonCode106)
		add("TaxPeriod", di.TaxPeriod107)
		add("DocNo", di.DocNumber108)
		add("DocDate", di.DocDate109)
		if di.UIP != "0" {
			add("UIN", di.UIP)
		}
	}
	s, err := EncodeST00012(fields)
	var se *ST00012Error
	if errors.As(err, &se) {
		field := st00012Source[se.Field]
		if field == "" {
			field = "payment"
		}
		return "", &Error{Kind: KindValidation, Message: "Невозможно сформировать QR-код с реквизитами платежа",
			FieldNames: []string{field}, Checks: []string{se.Field + ": " + se.Reason}}
	}
	return s, err
}

// PayeeDirectory finds an organisation and an account (an IdentityStore is
// one): the requisites QR of an invoice draft takes the payee's name, INN,
// KPP and bank from there.
type PayeeDirectory interface {
	GetOrg(ctx context.Context, id string) (Organisation, error)
	GetAccount(ctx context.Context, number string) (Account, error)
}

// RequisitesQR returns the ST00012 payload of the principal's document
// (GET …/{externalId}/requisites-qr). Another organisation's document is
// not found, as for GET of the document. A draft from an invoice may name
// only the payee's account, which is the requester's own (§4.1); the
// payee's name, INN, KPP and bank then come from the organisation and its
// account, when the service can look them up.
func (s *PaymentService) RequisitesQR(ctx context.Context, p Principal, externalID string) (string, error) {
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return "", err
	}
	d := sp.Doc
	if s.Payees != nil && (d.PayeeName == "" || d.PayeeBankBIC == "") {
		if err := fillOwnPayee(ctx, s.Payees, p, &d); err != nil {
			return "", err
		}
	}
	return PaymentST00012(&d)
}

// fillOwnPayee completes the payee of d from the principal's organisation
// when the payee account is one of its own; an account of anybody else is
// left alone, for its holder's name is not the service's to disclose.
func fillOwnPayee(ctx context.Context, dir PayeeDirectory, p Principal, d *Payment) error {
	acct, err := dir.GetAccount(ctx, d.PayeeAccount)
	if errors.Is(err, ErrNotFound) || err == nil && acct.OrgID != p.OrgID {
		return nil
	}
	if err != nil {
		return err
	}
	org, err := dir.GetOrg(ctx, p.OrgID)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&d.PayeeName, org.Name}, {&d.PayeeINN, org.INN}, {&d.PayeeKPP, org.KPP},
		{&d.PayeeBankBIC, acct.BIC}, {&d.PayeeBankCorrAccount, acct.CorrAccount},
	} {
		if *f.dst == "" {
			*f.dst = f.v
		}
	}
	return nil
}

package banking

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"time"
)

// Amount is a money amount as the partner sent it: the literal of a JSON
// number, kept verbatim so no float ever rounds it. Kopecks() parses it
// after validation; the zero Amount is "absent".
type Amount string

// UnmarshalJSON accepts only a JSON number (reference §4: amount is a
// number); a string or other type is a deserialization fault naming the
// field (encoding/json fills in the field path).
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*a = ""
		return nil
	}
	if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		return &json.UnmarshalTypeError{Value: "non-number", Type: amountType}
	}
	*a = Amount(b)
	return nil
}

var amountType = reflect.TypeFor[Amount]()

// MarshalJSON writes the amount back as a number with two decimals when it
// is valid, verbatim otherwise.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a == "" {
		return []byte("null"), nil
	}
	if k, ok := a.Kopecks(); ok {
		return []byte(FormatKopecks(k)), nil
	}
	return []byte(a), nil
}

// Kopecks parses the amount exactly: digits, at most two decimals that
// are not zero. At least one digit comes before the dot and, after a dot,
// at least one, any past the second zeros (15.000 is 1500 kopecks, 15.001
// fails); a value past int64 fails. An exponent form is exponentKopecks's: exact in
// kopecks or refused. The 18-character limit of reference
// §5.6 is a rule for what a partner sends (MaxAmountLen, checked by the
// validation), not for parsing: a stored document carries its amount as
// FormatKopecks wrote it, two decimals added, and "1000000000000000" (16
// characters, accepted) comes back as "1000000000000000.00" (19).
// It is one pass over the bytes, without the substrings and the
// concatenation of a split at the dot: a create parses its amount four
// times (validation, the budget rule, the stored kopecks, the digest).
func (a Amount) Kopecks() (int64, bool) {
	s := string(a)
	if s == "" {
		return 0, false
	}
	var k int64
	whole, frac := 0, -1 // digits before the dot; after it (-1: no dot yet)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			// Zeros past the kopeck change no value: a Java BigDecimal of
			// scale 3 is written 15.000, and both official SDKs send it.
			// Any other third decimal or a long mantissa fail a plain
			// amount but may be exact once an exponent follows (1.505e1,
			// 1e-20 with twenty zeros before it).
			if frac >= 2 {
				if c == '0' {
					continue
				}
				return exponentOrFail(s)
			}
			d := int64(c - '0')
			if k > (math.MaxInt64-d)/10 {
				return exponentOrFail(s)
			}
			k = k*10 + d
			if frac >= 0 {
				frac++
			} else {
				whole++
			}
		case c == '.' && frac < 0:
			frac = 0
		case c == 'e' || c == 'E':
			return exponentOrFail(s)
		default:
			return 0, false
		}
	}
	if whole == 0 || frac == 0 {
		return 0, false
	}
	for frac = max(frac, 0); frac < 2; frac++ {
		if k > math.MaxInt64/10 {
			return 0, false
		}
		k *= 10
	}
	return k, true
}

// MaxAmountLen is the longest amount literal a partner may send (reference
// §5.6: ≤ 18 characters).
const MaxAmountLen = 18

// FormatKopecks writes kopecks as rubles with two decimals and a dot.
func FormatKopecks(k int64) string {
	if k < 0 { // never from Kopecks; kept as it always was
		return strconv.FormatInt(k/100, 10) + "." + strconv.FormatInt(k%100/10, 10) + strconv.FormatInt(k%10, 10)
	}
	var buf [24]byte
	return string(appendKopecks(buf[:0], k))
}

// DepartmentalInfo is the budget-payment block, fields 101 and 104–110, 22
// (reference §4). A null member is "".
type DepartmentalInfo struct {
	DrawerStatus101 string `json:"drawerStatus101"`
	KBK             string `json:"kbk"`
	OKTMO           string `json:"oktmo"`
	ReasonCode106   string `json:"reasonCode106"`
	TaxPeriod107    string `json:"taxPeriod107"`
	DocNumber108    string `json:"docNumber108"`
	DocDate109      string `json:"docDate109"`
	PaymentKind110  string `json:"paymentKind110"`
	UIP             string `json:"uip"`
}

// MarshalJSON writes an empty member as null: the reference's documents
// leave members out as null (§4: "only paymentKind110 filled and the rest
// null"), the SDKs send null for a member they do not set, and the
// decoder reads null as "", so a document is answered as it was sent
// rather than with "" in place of each null.
func (d DepartmentalInfo) MarshalJSON() ([]byte, error) {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return json.Marshal(struct {
		DrawerStatus101 *string `json:"drawerStatus101"`
		KBK             *string `json:"kbk"`
		OKTMO           *string `json:"oktmo"`
		ReasonCode106   *string `json:"reasonCode106"`
		TaxPeriod107    *string `json:"taxPeriod107"`
		DocNumber108    *string `json:"docNumber108"`
		DocDate109      *string `json:"docDate109"`
		PaymentKind110  *string `json:"paymentKind110"`
		UIP             *string `json:"uip"`
	}{orNull(d.DrawerStatus101), orNull(d.KBK), orNull(d.OKTMO), orNull(d.ReasonCode106), orNull(d.TaxPeriod107),
		orNull(d.DocNumber108), orNull(d.DocDate109), orNull(d.PaymentKind110), orNull(d.UIP)})
}

// VAT is the provider's VAT block.
type VAT struct {
	Type   string `json:"type,omitempty"`
	Rate   string `json:"rate,omitempty"`
	Amount Amount `json:"amount,omitempty"`
}

// Payment is a payment order (PAY_DOC_RU, reference §4) as sent by the
// partner plus the bank's read-only fields.
type Payment struct {
	ExternalID           string            `json:"externalId"`
	Number               string            `json:"number,omitempty"`
	Date                 string            `json:"date,omitempty"`
	Amount               Amount            `json:"amount"`
	OperationCode        string            `json:"operationCode,omitempty"`
	DeliveryKind         string            `json:"deliveryKind,omitempty"`
	Priority             string            `json:"priority,omitempty"`
	UrgencyCode          string            `json:"urgencyCode,omitempty"`
	VOCode               string            `json:"voCode,omitempty"`
	Purpose              string            `json:"purpose,omitempty"`
	PayerName            string            `json:"payerName,omitempty"`
	PayerINN             string            `json:"payerInn,omitempty"`
	PayerKPP             string            `json:"payerKpp,omitempty"`
	PayerAccount         string            `json:"payerAccount,omitempty"`
	PayerBankBIC         string            `json:"payerBankBic,omitempty"`
	PayerBankCorrAccount string            `json:"payerBankCorrAccount,omitempty"`
	PayeeName            string            `json:"payeeName,omitempty"`
	PayeeINN             string            `json:"payeeInn,omitempty"`
	PayeeKPP             string            `json:"payeeKpp,omitempty"`
	PayeeAccount         string            `json:"payeeAccount,omitempty"`
	PayeeBankBIC         string            `json:"payeeBankBic,omitempty"`
	PayeeBankCorrAccount string            `json:"payeeBankCorrAccount,omitempty"`
	IncomeTypeCode       string            `json:"incomeTypeCode,omitempty"`
	CreditContractNumber string            `json:"creditContractNumber,omitempty"`
	IsPaidByCredit       *bool             `json:"isPaidByCredit,omitempty"`
	VAT                  *VAT              `json:"vat,omitempty"`
	DepartmentalInfo     *DepartmentalInfo `json:"departmentalInfo"`
	DigestSignatures     []DigestSignature `json:"digestSignatures,omitempty"`

	// Invoice-draft fields (reference §4.1).
	ExpirationDate string `json:"expirationDate,omitempty"`
	OrderNumber    string `json:"orderNumber,omitempty"`
	PaymentNumber  string `json:"paymentNumber,omitempty"`
	PayeeOrgIDHash string `json:"payeeOrgIdHash,omitempty"`
	// LinkedDocs are the partner's documents the draft settles (an
	// invoice, a contract), kept and answered as sent. They are not signed
	// fields (§8). They stay before the bank's fields, which must come last
	// (appendBankFields).
	LinkedDocs []LinkedDoc `json:"linkedDocs,omitempty"`

	BankStatus        string  `json:"bankStatus,omitempty"`
	BankComment       Comment `json:"bankComment"`
	CrucialFieldsHash string  `json:"crucialFieldsHash,omitempty"`
	SigningURL        string  `json:"signingUrl,omitempty"`
}

// Comment is a bankComment, the bank's note on a document's status. The
// reference lists it in every answer that carries bankStatus (§4: the 201
// and the GET of a payment document, its /state; §11: a card-limit
// application and its /state), so it is answered null when the bank has
// none rather than left out or sent as "".
type Comment string

// MarshalJSON writes an empty comment as null.
func (c Comment) MarshalJSON() ([]byte, error) {
	if c == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(c))
}

// LinkedDoc is one element of an invoice draft's linkedDocs (§4.1): the
// partner's id of a document, a UUID, and its type, a free text.
type LinkedDoc struct {
	DocExtID string `json:"docExtId"`
	Type     string `json:"type,omitempty"`
}

// DocKind tells a payment order from the invoice drafts.
type DocKind string

const (
	KindPayDoc        DocKind = "PAY_DOC_RU"
	KindInvoice       DocKind = "INVOICE"
	KindInvoiceAny    DocKind = "INVOICE_ANY"
	KindInvoiceBudget DocKind = "INVOICE_BUDGET"
)

// StoredPayment is a payment document as the store keeps it.
type StoredPayment struct {
	OrgID string
	Kind  DocKind
	Doc   Payment // without DigestSignatures
	// DocJSON, when set, is Doc encoded by the service, so a store keeps
	// these bytes instead of encoding the document a second time. Nothing
	// writes to it while the store's create runs: a store may keep it as
	// a string without copying it, for good unless it is a
	// PaymentBorrower, whose bytes the service reuses once its create
	// returned nil.
	DocJSON   []byte
	Kopecks   int64
	Status    string
	Comment   string
	Roles     []SignatureRole // signature roles collected so far
	Channel   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// StatusChange is one recorded move of a document's status.
type StatusChange struct {
	Status  string
	Comment string
	At      time.Time
}

// State is the answer of GET /v1/payments/{externalId}/state.
type State struct {
	BankStatus        string  `json:"bankStatus"`
	BankComment       Comment `json:"bankComment"`
	ChannelInfo       string  `json:"channelInfo"`
	CrucialFieldsHash string  `json:"crucialFieldsHash,omitempty"`
}

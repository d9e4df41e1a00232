package banking

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendBankFields pins that the answer spliced from the stored
// encoding is byte for byte what encoding the whole view writes, for
// documents whose last fields are set or empty and comments that need
// escaping.
func TestAppendBankFields(t *testing.T) {
	yes := true
	full := Payment{ExternalID: "e1", Number: "7", Date: "2026-01-02", Amount: "10.5", OperationCode: "01", Priority: "5",
		Purpose: `Оплата "по" счёту <1> & 2`, PayerName: "ООО", PayerINN: "7700000000", PayerAccount: "40702810000000000001",
		PayerBankBIC: "044525000", PayerBankCorrAccount: "30101810000000000000", PayeeName: "АО", PayeeBankBIC: "049805746",
		IsPaidByCredit: &yes, VAT: &VAT{Type: "INCLUDED", Rate: "20", Amount: "1.75"},
		DepartmentalInfo: &DepartmentalInfo{DrawerStatus101: "01", KBK: "18210102010011000110"},
		ExpirationDate:   "2026-02-01", OrderNumber: "o", PaymentNumber: "p", PayeeOrgIDHash: "h"}
	cases := []struct {
		name                  string
		doc                   Payment
		status, comment, hash string
	}{
		{"minimal, implemented", Payment{ExternalID: "x"}, StatusImplemented, "", "abc"},
		{"every field, checkerror comment", full, StatusCheckError, "Ошибка в поле \"kbk\": <нет> & \u2028", "0f"},
		{"no status", full, "", "", "ff"},
		{"no hash", Payment{ExternalID: "y", Amount: "1"}, StatusCreated, "c", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := json.Marshal(&c.doc)
			if err != nil {
				t.Fatal(err)
			}
			view := c.doc
			view.BankStatus, view.BankComment, view.CrucialFieldsHash = c.status, Comment(c.comment), c.hash
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(&view); err != nil {
				t.Fatal(err)
			}
			got := appendBankFields(doc, c.status, c.comment, c.hash)
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("spliced:\n%s\nencoded:\n%s", got, want.Bytes())
			}
			// A create's answer: the hash a hexHash (appendCreatedFields).
			hh := sha256Hex([]byte(c.name))
			view.CrucialFieldsHash = string(hh[:])
			want.Reset()
			if err := json.NewEncoder(&want).Encode(&view); err != nil {
				t.Fatal(err)
			}
			if got := appendCreatedFields([]byte("prefix"), doc, c.status, c.comment, &hh); !bytes.Equal(got, append([]byte("prefix"), want.Bytes()...)) {
				t.Fatalf("spliced with a hexHash:\n%s\nencoded:\n%s", got, want.Bytes())
			}
		})
	}
}

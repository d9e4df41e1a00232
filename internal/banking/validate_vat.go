package banking

import (
	"slices"
	"strings"
)

// vatRates are the VAT rates, in percent, that Russian tax law has had for
// the documents a payment may still settle (reference §5.6): 22 % from
// 2026, 20 % before it and 18 % before 2019 (a debt for an earlier
// shipment is paid at the rate of its day), the reduced 10 %, the
// simplified-tax payers' 5 % and 7 %, and 0 %. The rates calculated from
// an amount with VAT in it (10/110, 22/122) are not integers, so the
// field's two digits cannot carry them.
var vatRates = []string{"0", "5", "7", "10", "18", "20", "22"}

// checkVAT applies the logical controls of a document's VAT block, which
// the bank prints into the purpose for the payee's tax authority: a rate
// the law has, no VAT amount above the amount paid (whatever the type,
// the VAT is part of what is transferred), and a NO_VAT block that names
// neither a rate nor an amount. The reference leaves the block's
// consistency to the bank, so these are checks, CHECKERROR by default (a
// 400 under ChecksReject), like the other logical controls (§13). Values
// whose format already failed are the format's 400 and are not judged
// here.
func checkVAT(f *Findings, d *Payment) {
	v := d.VAT
	if v == nil {
		return
	}
	rate := v.Rate
	if allDigits(rate) {
		if rate = strings.TrimLeft(rate, "0"); rate == "" {
			rate = "0"
		}
	}
	vk, amountOK := v.Amount.Kopecks()
	amountOK = amountOK && v.Amount != ""
	if v.Type == "NO_VAT" {
		if v.Rate != "" && rate != "0" {
			f.checks.add("vat.rate", "при типе NO_VAT ставка НДС не указывается")
		}
		if amountOK && vk > 0 {
			f.checks.add("vat.amount", "при типе NO_VAT сумма НДС не указывается")
		}
		return
	}
	if allDigits(v.Rate) && !slices.Contains(vatRates, rate) {
		f.checks.add("vat.rate", "ставка НДС: "+strings.Join(vatRates, ", ")+" %")
	}
	if dk, ok := d.Amount.Kopecks(); ok && amountOK && vk > dk {
		f.checks.add("vat.amount", "сумма НДС больше суммы платежа")
	}
}

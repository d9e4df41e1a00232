package banking

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// st00012Example is the example payload of reference §14.
const st00012Example = "ST00012|Name=ООО «Ромашка»|PersonalAcc=40702810538833411733|BankName=ПАО СБЕРБАНК|BIC=044525225|CorrespAcc=30101810400000000225|PayeeINN=7707083893|KPP=773601001|Sum=10050|Purpose=Оплата по счету № 1"

var st00012ExampleFields = []ST00012Field{
	{"Name", "ООО «Ромашка»"}, {"PersonalAcc", "40702810538833411733"}, {"BankName", "ПАО СБЕРБАНК"},
	{"BIC", "044525225"}, {"CorrespAcc", "30101810400000000225"}, {"PayeeINN", "7707083893"},
	{"KPP", "773601001"}, {"Sum", "10050"}, {"Purpose", "Оплата по счету № 1"},
}

// st00012ExampleDoc is the payment document the example describes.
func st00012ExampleDoc() Payment {
	return Payment{PayeeName: "ООО «Ромашка»", PayeeAccount: "40702810538833411733", PayeeBankBIC: SandboxBIC,
		PayeeBankCorrAccount: "30101810400000000225", PayeeINN: "7707083893", PayeeKPP: "773601001",
		Amount: "100.50", Purpose: "Оплата по счету № 1", PayerINN: "7830002293"}
}

// The reference's example in each of the three encodings reads back as the
// same pairs, in order, values in UTF-8.
func TestParseST00012Encodings(t *testing.T) {
	// KOI8-R has neither guillemets nor the numero sign, so that case
	// writes plain quotes and "N", in the payload and in the pairs expected.
	plain := strings.NewReplacer("«", `"`, "»", `"`, "№", "N")
	plainFields := slices.Clone(st00012ExampleFields)
	for i := range plainFields {
		plainFields[i].Value = plain.Replace(plainFields[i].Value)
	}
	recode := func(digit byte, cm *charmap.Charmap, payload string) []byte {
		b, err := cm.NewEncoder().Bytes([]byte(payload[7:]))
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte("ST0001"+string(digit)), b...)
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		enc     byte
		want    []ST00012Field
	}{
		{"utf-8", []byte(st00012Example), ST00012UTF8, st00012ExampleFields},
		{"windows-1251", recode(ST00012Windows1251, charmap.Windows1251, st00012Example), ST00012Windows1251, st00012ExampleFields},
		{"koi8-r", recode(ST00012KOI8R, charmap.KOI8R, plain.Replace(st00012Example)), ST00012KOI8R, plainFields},
		{"trailing separator", []byte(st00012Example + "|"), ST00012UTF8, st00012ExampleFields},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseST00012(tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if got.Encoding != tc.enc || got.Separator != '|' || !slices.Equal(got.Fields, tc.want) {
				t.Fatalf("got %c %c %q", got.Encoding, got.Separator, got.Fields)
			}
		})
	}
}

func TestParseST00012Rejects(t *testing.T) {
	mand := "Name=A|PersonalAcc=40702810538833411733|BankName=B|BIC=044525225|CorrespAcc=0"
	for _, tc := range []struct{ name, payload, want string }{
		{"empty", "", "начинаться с ST0001"},
		{"other format", "ST00022|" + mand, "начинаться с ST0001"},
		{"header only", "ST00012", "начинаться с ST0001"},
		{"unknown encoding", "ST00014|" + mand, "неизвестный код кодировки"},
		{"separator is =", "ST00012=" + mand, "недопустимый разделитель"},
		{"separator is a letter", "ST00012x" + mand, "недопустимый разделитель"},
		{"pair without =", "ST00012|" + mand + "|Sum", "без знака"},
		{"empty pair", "ST00012|" + mand + "||Sum=1", "без знака"},
		{"no BIC", "ST00012|Name=A|PersonalAcc=1|BankName=B", "BIC: обязательный реквизит отсутствует"},
		{"order", "ST00012|PersonalAcc=1|Name=A|BankName=B|BIC=1|CorrespAcc=0", "Name: обязательный реквизит должен быть 1-м"},
		{"empty mandatory", "ST00012|Name=|PersonalAcc=1|BankName=B|BIC=1|CorrespAcc=0", "Name: обязательный реквизит пуст"},
		{"long BIC", "ST00012|Name=A|PersonalAcc=1|BankName=B|BIC=0445252250|CorrespAcc=0", "BIC: значение длиннее 9"},
		{"long purpose", "ST00012|" + mand + "|Purpose=" + strings.Repeat("я", 211), "Purpose: значение длиннее 210"},
		{"sum in rubles", "ST00012|" + mand + "|Sum=100.50", "Sum: сумма указывается в копейках"},
		{"duplicate", "ST00012|" + mand + "|Sum=1|Sum=2", "Sum: реквизит повторяется"},
		{"bad key", "ST00012|" + mand + "|Сумма=1", "имя реквизита"},
		{"not utf-8", "ST00012|" + mand + "|Purpose=\xff", "не в UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseST00012([]byte(tc.payload))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The example's document builds exactly the reference's example, and
// building then parsing gives back the same pairs.
func TestPaymentST00012Example(t *testing.T) {
	d := st00012ExampleDoc()
	got, err := PaymentST00012(&d)
	if err != nil {
		t.Fatal(err)
	}
	if got != st00012Example {
		t.Fatalf("got  %s\nwant %s", got, st00012Example)
	}
}

func TestPaymentST00012Cases(t *testing.T) {
	budget := Payment{PayeeName: "Казначейство России (ФНС России)", PayeeAccount: ENPPayeeAccount,
		PayeeBankBIC: ENPPayeeBIC, PayeeBankCorrAccount: ENPPayeeCorrAcc, PayeeINN: ENPPayeeINN, PayeeKPP: "770701001",
		Amount: "1234567.8", Purpose: "Единый налоговый платеж", PayerINN: SandboxOrgINN,
		DepartmentalInfo: &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0",
			TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", PaymentKind110: "0", UIP: "0"}}
	pipe := st00012ExampleDoc()
	pipe.Purpose = "Счёт 1|2"
	noCorr := st00012ExampleDoc()
	noCorr.PayeeBankCorrAccount, noCorr.PayeeBankBIC = "", "049805746"
	uin := budget
	di := *budget.DepartmentalInfo
	di.UIP, di.DrawerStatus101 = "18209965240123456789", "31"
	uin.DepartmentalInfo = &di
	for _, tc := range []struct {
		name string
		doc  Payment
		want string
	}{
		{"budget ЕНП", budget, "ST00012|Name=Казначейство России (ФНС России)|PersonalAcc=03100643000000018500|BankName=ОТДЕЛЕНИЕ ТУЛА БАНКА РОССИИ|BIC=017003983|CorrespAcc=40102810445370000059|PayeeINN=7727406020|KPP=770701001|Sum=123456780|Purpose=Единый налоговый платеж|PayerINN=7707083893|DrawerStatus=01|CBC=18201061201010000510|OKTMO=0|PaytReason=0|TaxPeriod=0|DocNo=0|DocDate=0"},
		{"budget with UIN", uin, "|DocDate=0|UIN=18209965240123456789"},
		{"separator in a value", pipe, "ST00012#Name=ООО «Ромашка»#PersonalAcc="},
		{"no correspondent account, unknown bank", noCorr, "|BankName=БИК 049805746|BIC=049805746|CorrespAcc=0|"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PaymentST00012(&tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("got %s\nwant it to contain %s", got, tc.want)
			}
			p, err := ParseST00012([]byte(got))
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			again, _ := EncodeST00012(p.Fields)
			if again != got {
				t.Fatalf("round trip changed the payload:\n%s\n%s", got, again)
			}
		})
	}
}

// A value the QR cannot carry is a validation fault naming the document's
// field, never a shortened value.
func TestPaymentST00012Refuses(t *testing.T) {
	long := st00012ExampleDoc()
	long.PayeeName = strings.Repeat("Я", 161)
	noAcc := st00012ExampleDoc()
	noAcc.PayeeAccount = ""
	badSum := st00012ExampleDoc()
	badSum.Amount = "1e-3" // below the kopeck
	for _, tc := range []struct {
		name  string
		doc   Payment
		field string
	}{
		{"name over 160", long, "payeeName"},
		{"no payee account", noAcc, "payeeAccount"},
		{"amount", badSum, "amount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PaymentST00012(&tc.doc)
			e, ok := err.(*Error)
			if !ok || e.Kind != KindValidation || !slices.Equal(e.FieldNames, []string{tc.field}) {
				t.Fatalf("err = %#v, want a validation fault on %s", err, tc.field)
			}
		})
	}
}

func TestEncodeST00012NoSeparator(t *testing.T) {
	fields := slices.Clone(st00012ExampleFields)
	fields[len(fields)-1].Value = st00012Separators
	if _, err := EncodeST00012(fields); err == nil || !strings.Contains(err.Error(), "разделител") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzParseST00012: the parser never panics, and what it accepts is
// written again by EncodeST00012 and read back as the same pairs.
func FuzzParseST00012(f *testing.F) {
	f.Add([]byte(st00012Example))
	f.Add([]byte("ST00011#Name=\xcf\xc0\xce|x#PersonalAcc=1#BankName=B#BIC=1#CorrespAcc=0#Sum=1#"))
	f.Add([]byte("ST00013;Name=a=b;PersonalAcc=1;BankName=B;BIC=1;CorrespAcc=0;UIN=0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseST00012(b)
		if err != nil {
			return
		}
		s, err := EncodeST00012(p.Fields)
		if err != nil {
			t.Fatalf("accepted %q but cannot write %q: %v", b, p.Fields, err)
		}
		q, err := ParseST00012([]byte(s))
		if err != nil {
			t.Fatalf("cannot read back %q: %v", s, err)
		}
		if !slices.Equal(p.Fields, q.Fields) {
			t.Fatalf("round trip: %q != %q", p.Fields, q.Fields)
		}
	})
}

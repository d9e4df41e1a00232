package banking

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/text/encoding/charmap"

	"partnerapi/internal/gost"
)

// The paper form of a certificate request: what the user signs and brings
// to the bank, which compares the key printed on it with the request's.
// Both SDKs fetch it as bytes (the Java one as byte[], the Node one as an
// arraybuffer its sample saves as certificate.pdf), so it is a PDF: one A4
// page in the standard Helvetica font, not embedded, whose Cyrillic letters
// are named by their Adobe glyph names through an encoding of windows-1251
// codes, so viewers draw them with their own Cyrillic font and copy them
// out as text.

// CertRequestFormLine is one line of the form: a label and its value.
type CertRequestFormLine struct{ Label, Value string }

// FormLines are the form's fields in print order.
func (r CertRequest) FormLines(org Organisation) []CertRequestFormLine {
	orgName := r.OrgName
	if orgName == "" {
		orgName = org.Name
	}
	lines := []CertRequestFormLine{
		{"Номер запроса", r.Number},
		{"Внешний идентификатор", r.ExternalID},
		{"Дата создания", r.CreatedAt.UTC().Format("02.01.2006 15:04 UTC")},
		{"Организация", orgName},
		{"ИНН", org.INN},
		{"ОГРН", org.OGRN},
		{"Владелец ключа", r.UserName},
		{"Должность", r.UserPosition},
		{"Электронная почта", r.Email},
		{"Идентификатор ключа (Bicrypt)", r.BicryptID},
	}
	if r.Login != "" {
		lines = append(lines, CertRequestFormLine{"Логин", r.Login})
	}
	if csr, err := gost.ParseCertificateRequest(r.CSR); err == nil {
		lines = append(lines, CertRequestFormLine{"Субъект запроса", csr.Subject},
			CertRequestFormLine{"Алгоритм ключа", fmt.Sprintf("ГОСТ Р 34.10-2012, %d бит", csr.PublicKey.Bits())})
		key := strings.ToUpper(hex.EncodeToString(gost.MarshalPublicKeyRaw(csr.PublicKey)))
		for i := 0; i < len(key); i += 64 {
			label := ""
			if i == 0 {
				label = "Открытый ключ"
			}
			lines = append(lines, CertRequestFormLine{label, spaced(key[i:min(i+64, len(key))])})
		}
	}
	return lines
}

// spaced groups hex digits by four, as printed keys are read aloud.
func spaced(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// CertRequestFormPDF is the form of r as a one-page PDF.
func CertRequestFormPDF(r CertRequest, org Organisation) []byte {
	var content bytes.Buffer
	y := 800
	text := func(size, x int, s string) {
		fmt.Fprintf(&content, "BT /F1 %d Tf %d %d Td (%s) Tj ET\n", size, x, y, pdfString(s))
	}
	text(14, 50, "Запрос № "+r.Number+" на сертификат ключа проверки электронной подписи")
	y -= 30
	for _, l := range r.FormLines(org) {
		text(10, 50, l.Label)
		text(10, 230, l.Value)
		y -= 18
	}
	y -= 30
	for _, s := range []string{
		"Подтверждаю достоверность сведений и принадлежность мне ключа.",
		"Владелец ключа: ____________________ / " + r.UserName + " /",
		"Руководитель организации: ____________________ М.П.",
		"Дата: \"____\" ______________ 20___ г.",
	} {
		text(10, 50, s)
		y -= 24
	}
	return pdfDocument(content.Bytes())
}

// pdfString encodes s in windows-1251 (runes it lacks become '?') and
// escapes what a PDF literal string must.
func pdfString(s string) string {
	enc := charmap.Windows1251.NewEncoder()
	var b strings.Builder
	for _, r := range s {
		c, err := enc.String(string(r))
		if err != nil || len(c) != 1 {
			c = "?"
		}
		switch c[0] {
		case '(', ')', '\\':
			b.WriteByte('\\')
		}
		b.WriteString(c)
	}
	return b.String()
}

// cyrillicDifferences names the glyphs of the windows-1251 codes the form
// uses: Ё, «, ё, №, », and А–я in order (afii10017… with Ё and ё at their
// own names between Е and Ж).
func cyrillicDifferences() string {
	var b strings.Builder
	b.WriteString("168 /afii10023 171 /guillemotleft 184 /afii10071 185 /afii61352 187 /guillemotright 192")
	for i := 0; i < 32; i++ { // А..Я, skipping Ё's name
		n := 10017 + i
		if i >= 6 {
			n++
		}
		fmt.Fprintf(&b, " /afii%d", n)
	}
	for i := 0; i < 32; i++ { // а..я, skipping ё's name
		n := 10065 + i
		if i >= 6 {
			n++
		}
		fmt.Fprintf(&b, " /afii%d", n)
	}
	return b.String()
}

// pdfDocument wraps a page's content stream in a PDF 1.4 file with its
// cross-reference table.
func pdfDocument(content []byte) []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [" +
			cyrillicDifferences() + "] >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
	}
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return out.Bytes()
}

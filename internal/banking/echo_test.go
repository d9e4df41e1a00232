package banking

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorsQuoteClientValuesBounded holds the domain's messages built from
// a client's value (an externalId in Errorf, a scope in an OAuth error, a
// QR code's pair) to a bounded, valid UTF-8 text: before, each quoted the
// whole value, a MiB of it when the client sent one.
func TestErrorsQuoteClientValuesBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, bad := range []string{long, "ab\xff\xfecd"} {
		for name, msg := range map[string]func() string{
			"Errorf": func() string {
				return Errorf(KindDataNotFound, "Запрос на сертификат с внешним идентификатором %s не найден", bad).Message
			},
			"Errorf with other arguments": func() string {
				return Errorf(KindWorkflow, "Документ %s в статусе %s: %d", bad, StatusCreated, 3).Message
			},
			"oauthErr": func() string { return oauthErr("invalid_request", "scope %s", bad).Error() },
			"QR pair": func() string {
				_, err := ParseST00012([]byte("ST00012|" + bad))
				if err == nil {
					return ""
				}
				return err.Error()
			},
		} {
			got := msg()
			if got == "" || len(got) > 1024 || !utf8.ValidString(got) {
				t.Fatalf("%s: %d bytes (valid UTF-8 %v): %.200q", name, len(got), utf8.ValidString(got), got)
			}
		}
	}
	// Arguments that need no cut are passed as they came.
	if got := Errorf(KindWorkflow, "Сертификат %s: %d", "kid-1", 7).Message; got != "Сертификат kid-1: 7" {
		t.Fatalf("got %q", got)
	}
}

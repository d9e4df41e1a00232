package billjournal

import "testing"

func TestNewNameIsName(t *testing.T) {
	for range 100 {
		if n := NewName(); !IsName(n) {
			t.Fatalf("NewName made %q, which IsName refuses", n)
		}
	}
	for _, bad := range []string{"", "bills-.journal", "bills-abcdefghijklmnop.journal.tmp", "../bills-abcdefghijklmnop.journal",
		"x/bills-abcdefghijklmnop.journal", "bills-ABCDEFGHIJKLMNOP.journal", "bills-abcdefghijklmno1.journal"} {
		if IsName(bad) {
			t.Errorf("IsName(%q) = true", bad)
		}
	}
}

package banking

import (
	"testing"
	"time"
)

// FuzzParseDate holds ParseDate, written by hand for speed, to what its
// comment says it is: time.Parse with time.DateOnly.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2024-02-29", "2023-02-29", "2024-13-01", "2024-00-10", "0000-01-01", "9999-12-31",
		"2024-1-01", "2024-01-1", "+024-01-01", "2024-04-31", "2024-04-30", "20240101"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseDate(s)
		want, err := time.Parse(time.DateOnly, s)
		if ok != (err == nil) || ok && !got.Equal(want) {
			t.Fatalf("ParseDate(%q) = %v, %v; time.Parse: %v, %v", s, got, ok, want, err)
		}
		if !ok && !got.IsZero() {
			t.Fatalf("ParseDate(%q) refused but answered %v", s, got)
		}
	})
}

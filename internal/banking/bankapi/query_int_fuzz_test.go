package bankapi

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"testing"
)

// plainDecimal is the grammar queryInt reads: a zero alone, or digits
// without a leading zero, and no sign.
var plainDecimal = regexp.MustCompile(`\A(?:0|[1-9][0-9]*)\z`)

// FuzzQueryInt holds queryInt, the reader of the list endpoints' page and
// limit query parameters, to the plain decimal grammar and to big.Int's
// reading of it: a value is taken exactly when it matches the grammar and
// fits an int, as the number big.Int reads, and every number taken is
// written back as the value it came from (one spelling per page).
func FuzzQueryInt(f *testing.F) {
	for _, s := range []string{"1", "0", "10", "+2", "007", "-1", " 1", "1 ", "0x1f", "1_000", "\u0662",
		strconv.Itoa(math.MaxInt), "9223372036854775808", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) > 64 {
			return
		}
		n, ok := queryInt(v)
		want, wantOK := new(big.Int), plainDecimal.MatchString(v)
		if wantOK {
			want.SetString(v, 10)
			wantOK = want.IsInt64() && want.Int64() <= math.MaxInt
		}
		if ok != wantOK || ok && int64(n) != want.Int64() {
			t.Fatalf("queryInt(%q) = %d, %v; the grammar and big.Int say %v, %v", v, n, ok, want, wantOK)
		}
		if ok && strconv.Itoa(n) != v {
			t.Fatalf("queryInt(%q) = %d, written %q", v, n, strconv.Itoa(n))
		}
	})
}

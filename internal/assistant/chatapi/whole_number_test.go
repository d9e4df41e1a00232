package chatapi

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// TestWholeNumbers: n and max_tokens take any JSON number whose value is
// whole, as JSON Schema 2020-12's "integer" (the contract's type for both)
// "matches any number with a zero fractional part": 1.0, 1e0 and 16.0
// mean 1 and 16, as a client that writes its numbers as floats sends them.
// A fraction that is not zero, even one a float64 would round away, is
// refused as before, in the same words; a whole number beyond int64 is
// int64's bound of its sign, which the service clamps (max_tokens) or
// refuses as out of its range (n).
func TestWholeNumbers(t *testing.T) {
	tests := []struct {
		name, members string
		n, maxTokens  int
		err           string
	}{
		{"integers", `"n":2,"max_tokens":16`, 2, 16, ""},
		{"point zero", `"n":1.0,"max_tokens":16.0`, 1, 16, ""},
		{"exponents", `"n":1e0,"max_tokens":1.6E1`, 1, 16, ""},
		{"zeros after the point", `"n":3.000,"max_tokens":2.50e1`, 3, 25, ""},
		{"negative exponent", `"n":20e-1,"max_tokens":1600e-2`, 2, 16, ""},
		{"zero", `"n":0.0,"max_tokens":-0.0e5`, 0, 0, ""},
		{"huge max_tokens clamped", `"n":1,"max_tokens":999999999.0`, 1, 999999999, ""},
		{"a fraction", `"n":1.5`, 0, 0, "invalid JSON body: n: expected an integer, got 1.5"},
		{"a fraction float64 rounds away", `"n":1.0000000000000000001`, 0, 0, "invalid JSON body: n: expected an integer, got 1.0000000000000000001"},
		{"a fraction by its exponent", `"max_tokens":15e-1`, 0, 0, "invalid JSON body: max_tokens: expected an integer, got 15e-1"},
		{"beyond int64", `"n":-99999999999999999999,"max_tokens":1e19`, -1 << 30, 1 << 30, ""},
		{"just beyond int64", `"n":9223372036854775808,"max_tokens":9223372036854775808.0`, 1 << 30, 1 << 30, ""},
		{"exponent beyond int", `"n":-1e99999999999999999999,"max_tokens":1E+99999999999999999999`, -1 << 30, 1 << 30, ""},
		{"a fraction by an exponent beyond int", `"max_tokens":1e-99999999999999999999`, 0, 0, "invalid JSON body: max_tokens: expected an integer, got 1e-99999999999999999999"},
		{"a string", `"n":"1"`, 0, 0, "invalid JSON body: n: expected an integer, got a string"},
		{"an array", `"max_tokens":[1]`, 0, 0, "invalid JSON body: max_tokens: expected an integer, got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _, err := decodeChatRequest(strings.NewReader(`{"model":"plain","messages":[{"role":"user","content":"hi"}],` + tt.members + `}`))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.N == nil || *req.N != tt.n || req.MaxTokens == nil || *req.MaxTokens != tt.maxTokens {
				t.Fatalf("n %v, max_tokens %v; want %d and %d", req.N, req.MaxTokens, tt.n, tt.maxTokens)
			}
		})
	}
}

// FuzzWholeLiteral holds wholeLiteral to exact arithmetic: a JSON number
// literal is read as a whole number exactly when math/big's rational of it
// is an integer, and then as that integer, or int64's bound of its sign
// beyond int64.
func FuzzWholeLiteral(f *testing.F) {
	for _, s := range []string{"1", "1.0", "-0.0e5", "1.6E1", "2.50e1", "20e-1", "15e-1", "1e19", "9223372036854775807.0",
		"-9223372036854775808", "9223372036854775808", "1.0000000000000000001", "100e-2", "0.001e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var num json.Number
		if len(s) > 64 || json.Unmarshal([]byte(s), &num) != nil || string(num) != s {
			return // not one JSON number literal alone
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(s[i+1:]); err != nil || e > 200 || e < -200 {
				return // big.Rat would expand it; wholeLiteral's bound is tested above
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		want := r.IsInt()
		wantV := int64(0)
		switch {
		case !want:
		case r.Num().IsInt64():
			wantV = r.Num().Int64()
		case r.Sign() > 0:
			wantV = math.MaxInt64
		default:
			wantV = math.MinInt64
		}
		v, got := wholeLiteral(s)
		if got != want || got && v != wantV {
			t.Fatalf("wholeLiteral(%q) = %d, %v; want %v (%s)", s, v, got, want, r.RatString())
		}
	})
}

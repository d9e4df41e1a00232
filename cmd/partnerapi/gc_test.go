package main

import "testing"

// TestGCPercentFor pins when the GC target is set: auto raises it only for
// processes without the LLM engine and without GOGC; a number is set as
// given; nonsense is refused.
func TestGCPercentFor(t *testing.T) {
	cases := []struct {
		flag, gogc string
		engine     bool
		want       int
		set, err   bool
	}{
		{"auto", "", false, gcPercentNoEngine, true, false},
		{"", "", false, gcPercentNoEngine, true, false},
		{"auto", "", true, 0, false, false},
		{"auto", "150", false, 0, false, false},
		{"200", "", true, 200, true, false},
		{"100", "300", false, 100, true, false},
		{"-1", "", false, -1, true, false},
		{"-2", "", false, 0, false, true},
		{"lots", "", false, 0, false, true},
	}
	for _, c := range cases {
		p, set, err := gcPercentFor(c.flag, c.engine, c.gogc)
		if p != c.want || set != c.set || (err != nil) != c.err {
			t.Errorf("gcPercentFor(%q, engine %v, GOGC %q) = %d, %v, %v; want %d, %v, error %v", c.flag, c.engine, c.gogc, p, set, err, c.want, c.set, c.err)
		}
	}
}

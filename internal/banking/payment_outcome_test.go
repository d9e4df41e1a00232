package banking

import (
	"slices"
	"testing"
)

// The markers a purpose carries: "outcome:" starting a word, the status
// name up to the next character that is not a Latin letter, digit or _.
func TestOutcomeMarkers(t *testing.T) {
	for _, c := range []struct {
		purpose string
		want    []string
	}{
		{"Оплата", nil},
		{"outcome:RECALL", []string{"RECALL"}},
		{"Оплата outcome:REFUSED_BY_RZK, без НДС", []string{"REFUSED_BY_RZK"}},
		{"(outcome:CARD2)", []string{"CARD2"}},
		{"xoutcome:RECALL _outcome:RECALL 1outcome:RECALL", nil},
		{"outcome:", []string{""}},
		{"outcome:recall outcome:FRAUDDENY", []string{"recall", "FRAUDDENY"}},
		{"outcome:RECALL-1", []string{"RECALL"}},
	} {
		if got := outcomeMarkers(c.purpose); !slices.Equal(got, c.want) {
			t.Errorf("outcomeMarkers(%q) = %q, want %q", c.purpose, got, c.want)
		}
	}
}

// Every walk a marker requests is a path of the §6 machine: it ends in
// the status it is named after (CARD2 and the side branches go on to
// IMPLEMENTED), and only its last status is final.
func TestOutcomeWalksEndInTheirStatus(t *testing.T) {
	for st, w := range outcomeWalks {
		last := w.steps[len(w.steps)-1]
		if IsFinal(st) != (last == st) || (!IsFinal(st) && last != StatusImplemented) {
			t.Errorf("%s: walk %v", st, w.steps)
		}
		for _, step := range w.steps[:len(w.steps)-1] {
			if IsFinal(step) {
				t.Errorf("%s: final %s inside the walk %v", st, step, w.steps)
			}
		}
		if IsFinal(st) == (w.comment == "") || st == StatusImplemented || st == StatusDeleted {
			t.Errorf("%s: comment %q", st, w.comment)
		}
	}
}

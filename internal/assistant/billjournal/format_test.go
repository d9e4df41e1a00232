package billjournal

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

func testBill(n int) assistant.Bill {
	return assistant.Bill{ID: fmt.Sprintf("bill-%04d", n), ClientID: "client", Model: "GigaChat", Prepaid: n%2 == 0, Tokens: int64(10 + n),
		MadeAt: time.UnixMilli(1_700_000_000_000 + int64(n))}
}

// journalOf encodes a journal: kept records for positive n, charged ones
// for negative n.
func journalOf(t testing.TB, ops ...int) []byte {
	t.Helper()
	buf := []byte(magic)
	for _, n := range ops {
		var rec []byte
		var err error
		if n > 0 {
			rec, err = keptRecord(testBill(n))
		} else {
			rec, err = chargedRecord(testBill(-n).ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, rec...)
	}
	return buf
}

func sameBill(a, b assistant.Bill) bool {
	return a.ID == b.ID && a.ClientID == b.ClientID && a.Model == b.Model && a.Prepaid == b.Prepaid && a.Tokens == b.Tokens &&
		a.MadeAt.Equal(b.MadeAt)
}

func ids(bills []assistant.Bill) []string {
	out := []string{}
	for _, b := range bills {
		out = append(out, b.ID)
	}
	return out
}

func want(ns ...int) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, testBill(n).ID)
	}
	return out
}

// Decode gives the bills kept and not charged, in the order kept, once
// each, with every field as written.
func TestDecodeLiveBills(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  []int
		live []string
	}{
		{"empty journal", nil, want()},
		{"kept", []int{1, 2, 3}, want(1, 2, 3)},
		{"one charged", []int{1, 2, 3, -2}, want(1, 3)},
		{"all charged", []int{1, 2, -1, -2}, want()},
		{"kept twice (two journals taken over)", []int{1, 2, 1}, want(1, 2)},
		{"charged before kept again", []int{1, -1, 1}, want()},
		{"charged, never kept here", []int{-7, 1}, want(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, _, damage := Decode(journalOf(t, c.ops...))
			if !slices.Equal(ids(live), c.live) || len(damage) != 0 {
				t.Fatalf("live %v, damage %v; want %v and none", ids(live), damage, c.live)
			}
			for _, b := range live {
				var n int
				if _, err := fmt.Sscanf(b.ID, "bill-%d", &n); err != nil {
					t.Fatal(err)
				}
				if w := testBill(n); !sameBill(b, w) {
					t.Errorf("bill %+v, want %+v", b, w)
				}
			}
		})
	}
	if live, n, damage := Decode(nil); live != nil || n != 0 || damage != nil {
		t.Fatalf("a file made and never written: %v %d %v", live, n, damage)
	}
}

// A torn or corrupted record is reported, with where it is, and skipped;
// every whole record before it and after it is read.
func TestDecodeSkipsDamage(t *testing.T) {
	whole := journalOf(t, 1, 2, 3)
	rec3, _ := keptRecord(testBill(3))
	rec2, _ := keptRecord(testBill(2))
	last := len(whole) - len(rec3)
	second := last - len(rec2)
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0x10
		return b
	}
	unknown, _ := record('X', []byte("x"))
	badBill, _ := record(kindKept, []byte(`{"id":"x"}`))
	for _, c := range []struct {
		name   string
		data   []byte
		live   []string
		offset int64 // of the first damage
	}{
		{"torn in the last record's header", whole[:last+5], want(1, 2), int64(last)},
		{"torn in the last record's payload", whole[:len(whole)-3], want(1, 2), int64(last)},
		{"torn after the header", []byte(magic)[:5], want(), 0},
		{"last record's payload flipped", flip(whole, len(whole)-2), want(1, 2), int64(last)},
		{"last record's length flipped", flip(whole, last+2), want(1, 2), int64(last)},
		{"middle record flipped", flip(whole, second+12), want(1, 3), int64(second)},
		{"garbage after the last record", append(bytes.Clone(whole), 0, 0, 0, 9, 1, 2, 3), want(1, 2, 3), int64(len(whole))},
		{"zeros after the last record (a preallocated tail)", append(bytes.Clone(whole), make([]byte, 100)...), want(1, 2, 3), int64(len(whole))},
		{"header flipped", flip(whole, 0), want(1, 2, 3), 0},
		{"a whole record of an unknown kind", slices.Concat(whole[:last], unknown, rec3), want(1, 2, 3), int64(last)},
		{"a whole record with a bill short of fields", slices.Concat(whole[:last], badBill, rec3), want(1, 2, 3), int64(last)},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, _, damage := Decode(c.data)
			if !slices.Equal(ids(live), c.live) {
				t.Errorf("live %v, want %v", ids(live), c.live)
			}
			if len(damage) == 0 || damage[0].Offset != c.offset || damage[0].Length <= 0 || damage[0].Reason == "" {
				t.Fatalf("damage %v, want a stretch at offset %d", damage, c.offset)
			}
			checkDamage(t, c.data, damage)
		})
	}
}

// checkDamage: the stretches are in order, apart and inside the data.
func checkDamage(t *testing.T, data []byte, damage []Damage) {
	t.Helper()
	end := int64(0)
	for _, d := range damage {
		if d.Offset < end || d.Length <= 0 || d.Offset+d.Length > int64(len(data)) {
			t.Fatalf("damage %v of %d bytes: %v out of order or bounds", damage, len(data), d)
		}
		end = d.Offset + d.Length
	}
}

// FuzzDecode: any bytes after a whole journal neither panic the reader nor
// lose the journal's bills (unless they hold a record charging one, which
// must name its id), what is read is well formed, and written again it
// reads the same.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 5})
	f.Add(journalOf(f, 4, 5, -4)[len(magic):])
	f.Add(append([]byte(magic), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, tail []byte) {
		prefix := journalOf(t, 1, 2, 3, -2)
		for _, data := range [][]byte{tail, append(bytes.Clone(prefix), tail...)} {
			live, _, damage := Decode(data)
			checkDamage(t, data, damage)
			seen := map[string]bool{}
			for _, b := range live {
				if b.ID == "" || b.ClientID == "" || b.Model == "" || b.Tokens <= 0 || seen[b.ID] {
					t.Fatalf("a bill read that is not well formed or not once: %+v", b)
				}
				seen[b.ID] = true
			}
			again := []byte(magic)
			for _, b := range live {
				rec, err := keptRecord(b)
				if err != nil {
					t.Fatal(err)
				}
				again = append(again, rec...)
			}
			relive, _, redamage := Decode(again)
			if !slices.Equal(ids(relive), ids(live)) || len(redamage) != 0 {
				t.Fatalf("written again: %v %v, want %v", ids(relive), redamage, ids(live))
			}
		}
		live, _, _ := Decode(append(bytes.Clone(prefix), tail...))
		got := map[string]bool{}
		for _, b := range live {
			got[b.ID] = true
		}
		for _, id := range want(1, 3) {
			if !got[id] && !bytes.Contains(tail, []byte(id)) {
				t.Fatalf("bill %s of the journal before the tail is lost", id)
			}
		}
	})
}

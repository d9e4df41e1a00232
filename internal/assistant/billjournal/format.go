// Package billjournal keeps the assistant's kept bills (the bills the
// database could not take at the end of a chat) in an append-only file in
// serve's data directory, so that a process that ends before the database
// takes them, a crash or kill -9 included, leaves them to the next start.
//
// The file is "PABILLS1" and then records, each
//
//	length  uint32, big-endian: the payload's bytes, 1 to maxPayload
//	crc     uint32, big-endian: CRC-32C (Castagnoli) of the payload
//	payload 'K' and a bill as JSON (kept), or 'C' and a bill id (charged)
//
// A bill is live from its K record until a C record names it. A record
// whose length, checksum or payload does not hold (a write torn by the
// crash, a flipped bit) is reported and skipped; reading goes on at the
// next offset where a whole record holds, so one bad record loses no
// other.
package billjournal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"partnerapi/internal/assistant"
)

// magic opens every journal; its last byte is the format's version.
const magic = "PABILLS1"

// recordHeader is the bytes before a record's payload: length and crc.
const recordHeader = 8

// maxPayload bounds a record's payload. A bill is its id, client id and
// model name (each bounded by the API) and a few numbers, far under it; a
// length over it is damage, not a record.
const maxPayload = 4096

// Record kinds, the first byte of a payload.
const (
	kindKept    = 'K'
	kindCharged = 'C'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// billJSON is a bill as a K record carries it.
type billJSON struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id"`
	Model    string `json:"model"`
	Prepaid  bool   `json:"prepaid"`
	Tokens   int64  `json:"tokens"`
	MadeAtMS int64  `json:"made_at_ms"`
}

// Damage is a stretch of a journal that could not be read and was skipped.
type Damage struct {
	Offset int64  // where it starts in the file
	Length int64  // its bytes
	Reason string // what did not hold at Offset
}

func (d Damage) String() string {
	return fmt.Sprintf("%d bytes at offset %d: %s", d.Length, d.Offset, d.Reason)
}

// keptRecord and chargedRecord encode one record.
func keptRecord(b assistant.Bill) ([]byte, error) {
	body, err := json.Marshal(billJSON{ID: b.ID, ClientID: b.ClientID, Model: b.Model, Prepaid: b.Prepaid, Tokens: b.Tokens,
		MadeAtMS: b.MadeAt.UnixMilli()})
	if err != nil {
		return nil, err
	}
	return record(kindKept, body)
}

func chargedRecord(id string) ([]byte, error) { return record(kindCharged, []byte(id)) }

func record(kind byte, body []byte) ([]byte, error) {
	n := 1 + len(body)
	if n > maxPayload {
		return nil, fmt.Errorf("billjournal: a record of %d bytes is over %d", n, maxPayload)
	}
	out := make([]byte, recordHeader, recordHeader+n)
	out = append(out, kind)
	out = append(out, body...)
	binary.BigEndian.PutUint32(out[0:4], uint32(n))
	binary.BigEndian.PutUint32(out[4:8], crc32.Checksum(out[recordHeader:], castagnoli))
	return out, nil
}

// entry is one record read: a kept bill, or the id of a charged one.
type entry struct {
	kind byte
	bill assistant.Bill // kindKept
	id   string         // kindCharged
}

// errNoRecord says why no record holds at an offset.
var errNoRecord = errors.New("no record")

// recordAt reads the record at data[off:]: the entry and its size in bytes,
// or why none holds there. A record whose frame holds but whose payload
// does not (unknown kind, bad bill) returns its size with the error, so
// that reading skips just it.
func recordAt(data []byte, off int) (e entry, size int, err error) {
	rest := data[off:]
	if len(rest) < recordHeader {
		return e, 0, fmt.Errorf("%w: %d bytes, shorter than a record's header", errNoRecord, len(rest))
	}
	n := int(binary.BigEndian.Uint32(rest[0:4]))
	if n < 1 || n > maxPayload {
		return e, 0, fmt.Errorf("%w: length %d", errNoRecord, n)
	}
	if len(rest) < recordHeader+n {
		return e, 0, fmt.Errorf("%w: a record of %d bytes with %d left (torn)", errNoRecord, n, len(rest)-recordHeader)
	}
	payload := rest[recordHeader : recordHeader+n]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(rest[4:8]) {
		return e, 0, fmt.Errorf("%w: checksum mismatch", errNoRecord)
	}
	size = recordHeader + n
	switch payload[0] {
	case kindKept:
		var j billJSON
		if err := json.Unmarshal(payload[1:], &j); err != nil {
			return e, size, fmt.Errorf("a kept bill that does not parse: %v", err)
		}
		if j.ID == "" || j.ClientID == "" || j.Model == "" || j.Tokens <= 0 {
			return e, size, errors.New("a kept bill without id, client, model or tokens")
		}
		return entry{kind: kindKept, bill: assistant.Bill{ID: j.ID, ClientID: j.ClientID, Model: j.Model, Prepaid: j.Prepaid,
			Tokens: j.Tokens, MadeAt: time.UnixMilli(j.MadeAtMS)}}, size, nil
	case kindCharged:
		if n == 1 {
			return e, size, errors.New("a charged record without a bill id")
		}
		return entry{kind: kindCharged, id: string(payload[1:])}, size, nil
	default:
		return e, size, fmt.Errorf("a record of unknown kind %q", payload[0])
	}
}

// plausible is a cheap look at whether a record may start at data[off],
// before its checksum is computed: a length in range that fits, and a
// payload that starts as a kept or a charged record does. Looking for the
// next record after damage would otherwise checksum up to maxPayload
// bytes at every offset of a damaged stretch.
func plausible(data []byte, off int) bool {
	rest := data[off:]
	if len(rest) < recordHeader+2 {
		return false
	}
	n := int(binary.BigEndian.Uint32(rest[0:4]))
	if n < 2 || n > maxPayload || len(rest) < recordHeader+n {
		return false
	}
	return rest[recordHeader] == kindKept && rest[recordHeader+1] == '{' || rest[recordHeader] == kindCharged
}

// Decode reads a journal's bytes: the live bills (kept and not charged),
// in the order they were kept, each id once, and the damage skipped. An
// empty file (made, and the process ended before its first write) is an
// empty journal.
func Decode(data []byte) (live []assistant.Bill, records int, damage []Damage) {
	if len(data) == 0 {
		return nil, 0, nil
	}
	skip := func(off, n int, reason string) {
		if k := len(damage); k > 0 && damage[k-1].Offset+damage[k-1].Length == int64(off) {
			damage[k-1].Length += int64(n) // one stretch, named by its first reason
			return
		}
		damage = append(damage, Damage{Offset: int64(off), Length: int64(n), Reason: reason})
	}
	off := min(len(data), len(magic))
	if string(data[:off]) != magic {
		// Not this version's header: the records after it may still be
		// whole (a damaged first block), so they are looked for.
		skip(0, off, "not a bill journal (no "+magic+" header)")
	}
	index := map[string]int{} // live bills by id, into live
	charged := map[string]bool{}
	for off < len(data) {
		e, size, err := recordAt(data, off)
		if err != nil && size > 0 {
			skip(off, size, err.Error())
			off += size
			continue
		}
		if err != nil {
			// The frame does not hold: go on at the next offset where one
			// does, or at the end.
			next := off + 1
			for ; next < len(data); next++ {
				if !plausible(data, next) {
					continue
				}
				if _, size, err := recordAt(data, next); err == nil || size > 0 {
					break
				}
			}
			skip(off, next-off, err.Error())
			off = next
			continue
		}
		records++
		off += size
		switch e.kind {
		case kindKept:
			if _, dup := index[e.bill.ID]; dup || charged[e.bill.ID] {
				continue
			}
			index[e.bill.ID] = len(live)
			live = append(live, e.bill)
		case kindCharged:
			charged[e.id] = true
			if i, ok := index[e.id]; ok {
				live[i].ID = "" // removed below, keeping the order
				delete(index, e.id)
			}
		}
	}
	out := live[:0]
	for _, b := range live {
		if b.ID != "" {
			out = append(out, b)
		}
	}
	return out, records, damage
}

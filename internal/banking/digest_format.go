package banking

import (
	"fmt"
	"strings"
)

// DigestFormat is how a digest's text is laid out where reference §8 leaves
// it open [I]. Its zero value is the default: the literal field list, lines
// joined by "\n", an absent value as an empty `name=` line so the line count
// stays fixed, no trailing separator. Each choice is switchable because
// the provider's own client, condo, sorts alphabetically and drops null
// fields for another document type (§8, §15 #1). One server uses one format
// for every digest it builds, checks and answers.
type DigestFormat struct {
	// Alphabetical orders the lines by field name instead of the listed
	// order (which ends with creditContractNumber after voCode).
	Alphabetical bool
	// CRLF separates lines with "\r\n" instead of "\n".
	CRLF bool
	// DropEmpty leaves out the line of an absent or empty value instead of
	// writing `name=`.
	DropEmpty bool
	// Trailing ends the text with a separator after its last line.
	Trailing bool
}

// digestOption is one key of the --banking-digest syntax: its two values,
// the default's first, and the switch the second one sets.
type digestOption struct {
	key    string
	values [2]string
	field  func(*DigestFormat) *bool
}

var digestOptions = []digestOption{
	{"order", [2]string{"listed", "alphabetical"}, func(f *DigestFormat) *bool { return &f.Alphabetical }},
	{"lines", [2]string{"lf", "crlf"}, func(f *DigestFormat) *bool { return &f.CRLF }},
	{"empty", [2]string{"keep", "drop"}, func(f *DigestFormat) *bool { return &f.DropEmpty }},
	{"trailing", [2]string{"off", "on"}, func(f *DigestFormat) *bool { return &f.Trailing }},
}

// ParseDigestFormat reads a format written as comma-separated key=value
// items, e.g. "order=alphabetical,lines=crlf,empty=drop,trailing=on"
// (String's form). A key left out keeps its default, so "" is the default
// format. An unknown key or value, an item without "=" or a key given twice
// is an error naming it.
func ParseDigestFormat(s string) (DigestFormat, error) {
	var f DigestFormat
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	var seen uint // bit i: digestOptions[i] given
	for item := range strings.SplitSeq(s, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return DigestFormat{}, fmt.Errorf("item %q is not key=value (keys: %s)", item, digestKeys())
		}
		i := digestOptionIndex(key)
		if i < 0 {
			return DigestFormat{}, fmt.Errorf("unknown key %q (keys: %s)", key, digestKeys())
		}
		o := &digestOptions[i]
		if seen&(1<<i) != 0 {
			return DigestFormat{}, fmt.Errorf("key %q given twice", key)
		}
		seen |= 1 << i
		switch value {
		case o.values[0]:
			*o.field(&f) = false
		case o.values[1]:
			*o.field(&f) = true
		default:
			return DigestFormat{}, fmt.Errorf("key %q: unknown value %q (want %s or %s)", key, value, o.values[0], o.values[1])
		}
	}
	return f, nil
}

func digestOptionIndex(key string) int {
	for i := range digestOptions {
		if digestOptions[i].key == key {
			return i
		}
	}
	return -1
}

func digestKeys() string {
	keys := make([]string, len(digestOptions))
	for i, o := range digestOptions {
		keys[i] = o.key
	}
	return strings.Join(keys, ", ")
}

// String writes every key, defaults included, in the form
// ParseDigestFormat reads: what the server logs and --banking-digest's
// default shows.
func (f DigestFormat) String() string {
	var b strings.Builder
	for i, o := range digestOptions {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(o.key)
		b.WriteByte('=')
		v := f
		if *o.field(&v) {
			b.WriteString(o.values[1])
		} else {
			b.WriteString(o.values[0])
		}
	}
	return b.String()
}

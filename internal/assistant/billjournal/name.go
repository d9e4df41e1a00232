package billjournal

import (
	"crypto/rand"
	"regexp"
	"strings"
)

// NewName is a fresh journal file name: "bills-", 16 of rand.Text's base32
// characters lower-cased, ".journal". Open names its own journal so, and
// restore names the journals it brings back so, for Open to take over.
func NewName() string {
	return "bills-" + strings.ToLower(rand.Text()[:16]) + ".journal"
}

// namePattern is the shape of every name NewName makes.
var namePattern = regexp.MustCompile(`^bills-[a-z2-7]{16}\.journal$`)

// IsName tells whether name is one NewName could have made, and so a
// journal's base name with no directory, separator or ".." in it.
func IsName(name string) bool { return namePattern.MatchString(name) }

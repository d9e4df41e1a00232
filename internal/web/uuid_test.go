package web

import (
	"regexp"
	"testing"
)

// TestUUIDs checks both generators produce distinct version 4 UUIDs in the
// canonical lower-case form.
func TestUUIDs(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for name, gen := range map[string]func() string{"NewUUID": NewUUID, "newRequestID": func() string { return new(requestState).newRequestID() }} {
		seen := map[string]bool{}
		for range 1000 {
			id := gen()
			if !form.MatchString(id) {
				t.Fatalf("%s: %q is not a version 4 UUID", name, id)
			}
			if seen[id] {
				t.Fatalf("%s: %q repeated", name, id)
			}
			seen[id] = true
		}
	}
}

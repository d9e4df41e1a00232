package bankingsql

import (
	"slices"
	"testing"

	"partnerapi/internal/banking"
)

// The roles column: comma-separated, "" for none, read back as written.
func TestJoinRoles(t *testing.T) {
	cases := []struct {
		roles []banking.SignatureRole
		want  string
	}{
		{nil, ""},
		{[]banking.SignatureRole{banking.RoleSoleAuthority}, string(banking.RoleSoleAuthority)},
		{[]banking.SignatureRole{banking.RoleFirst, banking.RoleSecond}, string(banking.RoleFirst) + "," + string(banking.RoleSecond)},
	}
	for _, c := range cases {
		got := joinRoles(c.roles)
		if got != c.want {
			t.Errorf("joinRoles(%v) = %q, want %q", c.roles, got, c.want)
		}
		if back := splitRoles(got); !slices.Equal(back, c.roles) {
			t.Errorf("splitRoles(%q) = %v, want %v", got, back, c.roles)
		}
	}
}

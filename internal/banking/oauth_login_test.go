package banking

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// loginStore is an IdentityStore that knows users by login only.
type loginStore struct {
	IdentityStore // nil: Login calls only what is below
	users         map[string]User
}

func (s loginStore) GetUserByLogin(_ context.Context, login string) (User, error) {
	if u, ok := s.users[login]; ok {
		return u, nil
	}
	return User{}, ErrNotFound
}

// loginIdentity is an Identity over two users, "alice" with a password
// and "robot" without one, whose password checks are recorded.
func loginIdentity(t *testing.T, now *time.Time) (*Identity, *[]string) {
	t.Helper()
	h, err := HashPassword("right")
	if err != nil {
		t.Fatal(err)
	}
	id := NewIdentity(loginStore{users: map[string]User{
		"alice": {ID: "u1", Login: "alice", PasswordHash: h},
		"robot": {ID: "u2", Login: "robot"},
	}})
	id.Now = func() time.Time { return *now }
	var checked []string
	id.checkPassword = func(hash, password string) bool {
		checked = append(checked, hash)
		return CheckPassword(hash, password)
	}
	return id, &checked
}

// An unknown login and a user without a password are refused after the
// same PBKDF2 a wrong password costs, so the answer's timing does not tell
// which logins exist.
func TestLoginHashesWhateverTheLogin(t *testing.T) {
	now := time.Now()
	id, checked := loginIdentity(t, &now)
	for _, login := range []string{"alice", "nobody", "robot"} {
		*checked = nil
		_, err := id.Login(context.Background(), login, "wrong", "192.0.2.1")
		if err == nil || !strings.Contains(err.Error(), "Неверный логин") {
			t.Fatalf("%s: %v", login, err)
		}
		if len(*checked) != 1 || !strings.HasPrefix((*checked)[0], fmt.Sprintf("pbkdf2-sha256$%d$", pbkdf2Iterations)) {
			t.Fatalf("%s: password checks %q, want one full PBKDF2", login, *checked)
		}
	}
	// The dummy hash never signs anybody in, whatever the password.
	*checked = nil
	if _, err := id.Login(context.Background(), "robot", "", "192.0.2.1"); err == nil || len(*checked) != 1 {
		t.Fatalf("robot with an empty password: %v, %d checks", err, len(*checked))
	}
	if _, err := id.Login(context.Background(), "alice", "right", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
}

// Five wrong passwords slow down the address they came from, not the user:
// the right password from another address still signs in, and the
// throttled address is let in again after the window.
func TestLoginThrottlesPerAddress(t *testing.T) {
	now := time.Now()
	id, _ := loginIdentity(t, &now)
	ctx := context.Background()
	for i := 0; i < loginMaxFailures; i++ {
		if _, err := id.Login(ctx, "alice", "wrong", "198.51.100.7"); err == nil {
			t.Fatal("wrong password accepted")
		}
	}
	if _, err := id.Login(ctx, "alice", "right", "198.51.100.7"); err == nil || !strings.Contains(err.Error(), "Слишком много") {
		t.Fatalf("guessing address: %v", err)
	}
	if u, err := id.Login(ctx, "alice", "right", "203.0.113.9"); err != nil || u.ID != "u1" {
		t.Fatalf("the user from elsewhere: %v", err)
	}
	now = now.Add(loginWindow)
	if _, err := id.Login(ctx, "alice", "right", "198.51.100.7"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// Made-up logins cannot grow the failure counters without bound: past the
// cap the stalest key goes, and the latest ones are still counted.
func TestLoginFailuresBounded(t *testing.T) {
	f := loginFailures{max: 100}
	now := time.Now()
	for i := 0; i < 1000; i++ {
		f.add(loginKey{fmt.Sprintf("made-up-%d", i), "192.0.2.1"}, now)
	}
	if n := f.len(); n != 100 {
		t.Fatalf("%d keys held, want 100", n)
	}
	if f.recent(loginKey{"made-up-0", "192.0.2.1"}, now) != 0 || f.recent(loginKey{"made-up-999", "192.0.2.1"}, now) != 1 {
		t.Fatal("eviction did not drop the stalest key")
	}
	k := loginKey{"alice", "192.0.2.1"}
	for i := 0; i < 3*loginMaxFailures; i++ {
		f.add(k, now)
	}
	if n := f.recent(k, now); n != loginMaxFailures {
		t.Fatalf("one key holds %d failures, want at most %d", n, loginMaxFailures)
	}
}

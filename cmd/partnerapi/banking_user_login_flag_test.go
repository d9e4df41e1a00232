package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// TestBankingUserFlagTakesLogin: the commands that name a user with --user
// take its login as well as the id `banking user create` prints. The README
// shows `user create --login L` and then `--user USER`, and a developer
// passes the login they just chose: before, every one of these commands
// answered "no such user" (or "not a user of organisation") for it.
func TestBankingUserFlagTakesLogin(t *testing.T) {
	dir := t.TempDir()
	st := []string{"--data-dir", dir}
	org := bankingCLI(t, "", append([]string{"org", "create", "--name", "ООО Ромашка", "--inn", "7830002293", "--kpp", "783001001"}, st...)...)["id"].(string)
	user := bankingCLI(t, "", append([]string{"user", "create", "--org", org, "--login", "romashka"}, st...)...)["id"].(string)
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, "romashka", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(file, cert.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"romashka", user} {
		t.Run(who, func(t *testing.T) {
			run := func(args ...string) string {
				t.Helper()
				var out bytes.Buffer
				if err := runBanking(context.Background(), append(args, st...), noEnv,
					stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
					t.Fatalf("banking %v: %v", args, err)
				}
				return out.String()
			}
			var added map[string]string
			if err := json.Unmarshal([]byte(run("cert", "add", "--user", who, "--cert", file)), &added); err != nil {
				t.Fatal(err)
			}
			var listed []map[string]any
			if err := json.Unmarshal([]byte(run("cert", "list", "--user", who)), &listed); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, c := range listed {
				found = found || (c["uuid"] == added["uuid"] && c["user"] == user)
			}
			if !found {
				t.Fatalf("cert list --user %s: %v, want %s of user %s", who, listed, added["uuid"], user)
			}
			if out := run("user", "signing-method", "--user", who, "--signing-method", "OneTimePassword"); !strings.Contains(out, `"id":"`+user+`"`) {
				t.Fatalf("user signing-method: %s, want the user's id %s", out, user)
			}
			if out := run("token", "--scope", "PAY_DOC_RU", "--org", org, "--user", who); !strings.Contains(out, "access_token") {
				t.Fatalf("token: %s", out)
			}
		})
	}
	// A login of another organisation is still not this one's user.
	var out bytes.Buffer
	err = runBanking(context.Background(), append([]string{"token", "--scope", "PAY_DOC_RU", "--user", "romashka"}, st...), noEnv,
		stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "not a user of organisation") {
		t.Fatalf("token for the sandbox organisation as romashka: %v %s", err, out.String())
	}
}

// TestBankingProvisioningDuplicatesNameTheFlag: registering a login or an
// account a second time says which flag and value are taken, instead of
// the store's "user: banking: already exists", and leaves the first.
func TestBankingProvisioningDuplicatesNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	st := []string{"--data-dir", dir}
	org := bankingCLI(t, "", append([]string{"org", "create", "--name", "ООО Ромашка", "--inn", "7830002293", "--kpp", "783001001"}, st...)...)["id"].(string)
	bankingCLI(t, "", append([]string{"user", "create", "--org", org, "--login", "romashka"}, st...)...)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "--org", org, "--login", "romashka"}, "--login romashka: a user with this login already exists"},
		// The sandbox's own user and account are there from the start.
		{[]string{"user", "create", "--org", org, "--login", "sandbox"}, "--login sandbox: a user with this login already exists"},
		{[]string{"account", "add", "--org", org, "--number", "40702810538833411733", "--bic", "044525225"},
			"--number 40702810538833411733: the account is already registered"},
	} {
		err := runBanking(context.Background(), append(c.args, st...), noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil || err.Error() != c.want {
			t.Errorf("banking %v: %v, want %q", c.args, err, c.want)
		}
	}
}

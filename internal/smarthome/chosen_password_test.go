package smarthome_test

import (
	"context"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
)

// A credential created with a chosen password authenticates with it and
// with nothing else; a password shorter than a generated one, or of other
// characters, creates no credential.
func TestCreateCredentialWithChosenPassword(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	const pw = "ci_agent_password_0123456789abcdef"
	got, err := svc.CreateCredentialWith(ctx, smarthome.KindAgent, "ci-agent", pw)
	if err != nil || got != pw {
		t.Fatalf("CreateCredentialWith: %q %v", got, err)
	}
	if err := svc.Authenticate(ctx, smarthome.KindAgent, "ci-agent", pw); err != nil {
		t.Errorf("the chosen password: %v", err)
	}
	if err := svc.Authenticate(ctx, smarthome.KindAgent, "ci-agent", pw+"x"); err == nil {
		t.Error("another password was taken")
	}
	for _, bad := range []string{"", strings.Repeat("a", 31), strings.Repeat("a", 129), strings.Repeat("a", 32) + ":", strings.Repeat("a", 31) + "é"} {
		if _, err := svc.CreateCredentialWith(ctx, smarthome.KindAgent, "other", bad); err == nil {
			t.Errorf("password %q taken", bad)
		}
	}
	if err := svc.Authenticate(ctx, smarthome.KindAgent, "other", strings.Repeat("a", 32)+":"); err == nil {
		t.Error("a refused create made the credential")
	}
}

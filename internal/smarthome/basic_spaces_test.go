package smarthome_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
)

// Basic credentials are read after any number of spaces following the
// scheme, as RFC 9110 §11.4 allows (auth-scheme [ 1*SP token68 ]), both
// Base64 login:password and an opaque credential; no space, or another
// white space, is still not Basic.
func TestBasicAllowsSeveralSpaces(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	const opaque = "qwerty-1234-abcd"
	sum := sha256.Sum256([]byte(opaque))
	cs, err := smarthome.ParseOpaqueCredentials("agent1=sha256:" + hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	svc.SetOpaqueCredentials(cs)
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent1")
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("agent1:" + pw))
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"Basic " + b64, true},
		{"Basic  " + b64, true},
		{"basic    " + b64, true},
		{"Basic  " + opaque, true},
		{"BASIC   " + opaque, true},
		{"Basic" + b64, false},
		{"Basic\t" + b64, false},
		{"Basic  ", false},
		{"Basic  " + b64 + "x", false},
	} {
		if err := svc.AuthenticateBasic(ctx, smarthome.KindAgent, tc.header); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok %v", tc.header, err, tc.ok)
		}
	}
}

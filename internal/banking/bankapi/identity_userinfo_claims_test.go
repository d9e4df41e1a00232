package bankapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// TestUserInfoDerivedClaims: the signed user-info JWT carries terBank,
// userSignatureType, individualExecutiveAgency and isIdentified (reference
// §3), with the types of the provider's samples (a string, a string, the
// number 0 or 1, a boolean), derived from the organisation, its accounts
// and the user's active certificates; terBank as the organisation was
// created with wins over its accounts' BIC.
func TestUserInfoDerivedClaims(t *testing.T) {
	e := newIDEnv(t)
	bankKey, err := banking.NewBankKey(e.now)
	if err != nil {
		t.Fatal(err)
	}
	e.id.IDTokens = banking.NewIDTokenSigner("https://bank.test", bankKey)
	ctx := context.Background()
	st := e.id.Store
	// A certificate valid on the test's clock: one outside its validity
	// period gives no right to sign.
	certKey, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(certKey, "user-info", e.now.Add(-time.Hour), e.now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// newUser makes an organisation with accounts at bics and a user
	// holding certificates of roles (the last inactive when inactive).
	newUser := func(t *testing.T, n, terBank string, executive bool, bics []string, roles []banking.SignatureRole, inactive bool) string {
		org, user := "org-"+n, "user-"+n
		if err := st.CreateOrg(ctx, banking.Organisation{ID: org, Name: "ООО " + n, INN: "7830002293", TerBank: terBank}); err != nil {
			t.Fatal(err)
		}
		for i, bic := range bics {
			acc := banking.Account{Number: "4070281090000000000" + string(rune('1'+i)), OrgID: org, BIC: bic, Currency: "810", Status: banking.AccountOpen}
			acc.Number = n[:1] + acc.Number[1:]
			if err := st.AddAccount(ctx, acc); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.CreateUser(ctx, banking.User{ID: user, OrgID: org, Login: n, Executive: executive}); err != nil {
			t.Fatal(err)
		}
		for i, r := range roles {
			c := banking.Certificate{UUID: banking.NewUUID(), UserID: user, OrgID: org, DER: cert.Raw, TypeName: "TOKEN", Role: r,
				Active: !inactive || i < len(roles)-1}
			if err := st.AddCertificate(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		p, err := e.id.IssueTokens(ctx, banking.SandboxClientID, org, user, []string{banking.ScopeOpenID})
		if err != nil {
			t.Fatal(err)
		}
		return p.AccessToken
	}
	for _, tc := range []struct {
		name      string
		token     func(t *testing.T) string
		terBank   string
		signature string
		executive float64
		ident     bool
	}{
		{"sandbox", func(t *testing.T) string { return e.token(t, banking.ScopeOpenID).AccessToken },
			"Московский Банк Сбербанка РФ", "Единственная подпись", 1, true},
		{"bare", func(t *testing.T) string { return newUser(t, "1bare", "", false, nil, nil, false) },
			"", "Без права подписи", 0, false},
		{"north-west first", func(t *testing.T) string {
			return newUser(t, "2nw", "", false, []string{"049805746", "044030653"}, []banking.SignatureRole{banking.RoleFirst}, false)
		}, "Северо-Западный Банк Сбербанка РФ", "Первая подпись", 0, true},
		{"told bank, second", func(t *testing.T) string {
			return newUser(t, "3told", "Байкальский Банк Сбербанка РФ", true, []string{"044525225"}, []banking.SignatureRole{banking.RoleSecond}, false)
		}, "Байкальский Банк Сбербанка РФ", "Вторая подпись", 1, true},
		{"unknown bic, first and second", func(t *testing.T) string {
			return newUser(t, "4pair", "", false, []string{"049805746"}, []banking.SignatureRole{banking.RoleFirst, banking.RoleSecond}, false)
		}, "", "Единственная подпись", 0, true},
		{"sole inactive", func(t *testing.T) string {
			return newUser(t, "5off", "", false, nil, []banking.SignatureRole{banking.RoleSecond, banking.RoleSoleAuthority}, true)
		}, "", "Вторая подпись", 0, true},
		{"only inactive", func(t *testing.T) string {
			return newUser(t, "6none", "", false, nil, []banking.SignatureRole{banking.RoleQualified}, true)
		}, "", "Без права подписи", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims := userInfoJWTClaims(t, e, tc.token(t))
			want := map[string]any{"terBank": tc.terBank, "userSignatureType": tc.signature,
				"individualExecutiveAgency": tc.executive, "isIdentified": tc.ident}
			for name, v := range want {
				got, ok := claims[name]
				if !ok || got != v {
					t.Errorf("claim %s = %#v (present %v), want %#v", name, got, ok, v)
				}
			}
		})
	}
}

// userInfoJWTClaims fetches user-info as the JWT the provider answers and
// decodes its claims.
func userInfoJWTClaims(t *testing.T, e *idEnv, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/ic/sso/api/v1/oauth/user-info", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	parts := strings.Split(string(raw), ".")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwt" || len(parts) != 3 {
		t.Fatalf("want a JWT: %d %s %.80s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

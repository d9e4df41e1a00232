package assistant_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/storetest"
)

// fakeEngine serves fixed models; the chat service never generates here.
type fakeEngine struct{ models []assistant.ModelInfo }

func (f fakeEngine) Models(context.Context) ([]assistant.ModelInfo, error) { return f.models, nil }
func (f fakeEngine) CountTokens(_ context.Context, _ string, text string) (int, error) {
	return len(strings.Fields(text)), nil
}
func (f fakeEngine) Generate(context.Context, assistant.GenerateRequest, func(assistant.Delta) error) (assistant.Result, error) {
	return assistant.Result{}, errors.New("not used")
}

func newService(t *testing.T, cfg assistant.Config) *assistant.Service {
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	eng := fakeEngine{[]assistant.ModelInfo{{Name: "m", Version: "2.0", Type: "chat", ContextWindow: 100}}}
	return assistant.NewService(assistantsql.New(db), eng, cfg)
}

func TestParseScope(t *testing.T) {
	for in, want := range map[string]assistant.Scope{
		"ASSISTANT_API_CORP": assistant.ScopeCorp, "GIGACHAT_API_PERS": assistant.ScopePers,
		"GIGACHAT_API_B2B": assistant.ScopeB2B, " ASSISTANT_API_B2B ": assistant.ScopeB2B,
		"": "", "GIGACHAT_API_X": "", "assistant_api_corp": "",
		// ASCII white space a shell or form left around the name is
		// ignored; a Unicode space (NBSP, NEL) makes the scope garbled.
		"GIGACHAT_API_PERS\r\n": assistant.ScopePers, "\u00a0GIGACHAT_API_PERS": "", "ASSISTANT_API_B2B\u0085": "",
		"GIGACHAT_API_CORP\u3000": "",
	} {
		got, ok := assistant.ParseScope(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseScope(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	s := newService(t, assistant.Config{})
	for id, ok := range map[string]bool{"m": true, "m:latest": true, "m:2.0": true, "m:1.0": false, "x": false, "": false, "m:": false} {
		_, err := s.ResolveModel(context.Background(), id)
		if (err == nil) != ok || (!ok && !errors.Is(err, assistant.ErrNoSuchModel)) {
			t.Errorf("ResolveModel(%q): %v", id, err)
		}
	}
}

func TestAcquireLimits(t *testing.T) {
	s := newService(t, assistant.Config{Limits: map[assistant.Scope]int{assistant.ScopePers: 1, assistant.ScopeCorp: 2}})
	pers := assistant.Principal{ClientID: "a", Scope: assistant.ScopePers}
	r1, err := s.Acquire(context.Background(), pers)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(context.Background(), pers); !errors.Is(err, assistant.ErrTooManyRequests) {
		t.Fatalf("second PERS slot: %v", err)
	}
	// Another client is not affected.
	if r, err := s.Acquire(context.Background(), assistant.Principal{ClientID: "b", Scope: assistant.ScopePers}); err != nil {
		t.Fatal(err)
	} else {
		r()
	}
	r1()
	r1() // idempotent: must not free a slot twice
	// The slots still held are released when the test ends: a held lease
	// keeps the service's renewal loop running in the process, which
	// TestRenewalLoopStopsWhenIdle, run after this test (-count, -shuffle),
	// counts.
	var held []func()
	t.Cleanup(func() {
		for _, r := range held {
			r()
		}
	})
	corp := assistant.Principal{ClientID: "c", Scope: assistant.ScopeCorp}
	for range 2 {
		r, err := s.Acquire(context.Background(), corp)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	if _, err := s.Acquire(context.Background(), corp); !errors.Is(err, assistant.ErrTooManyRequests) {
		t.Fatalf("third CORP slot: %v", err)
	}
	r, err := s.Acquire(context.Background(), pers)
	if err != nil {
		t.Fatalf("PERS slot after release: %v", err)
	}
	held = append(held, r)
}

func TestTokenRateAndExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newService(t, assistant.Config{Now: func() time.Time { return now }, TokenRate: 3})
	ctx := context.Background()
	c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	const rq = "72384bd5-0ca0-4cfd-9ac7-65d75258284c"
	var tok string
	for i := range 3 {
		var exp time.Time
		if tok, exp, err = s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if !exp.Equal(now.Add(30 * time.Minute)) {
			t.Fatalf("expires %v", exp)
		}
	}
	if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); !errors.Is(err, assistant.ErrTokenRate) {
		t.Fatalf("4th token in a second: %v", err)
	}
	now = now.Add(time.Second)
	if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); err != nil {
		t.Fatalf("token a second later: %v", err)
	}
	if p, err := s.Authenticate(ctx, tok); err != nil || p.ClientID != c.ClientID || p.Scope != assistant.ScopeCorp {
		t.Fatalf("Authenticate = %+v %v", p, err)
	}
	now = now.Add(30 * time.Minute)
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, assistant.ErrTokenExpired) {
		t.Fatalf("expired token: %v", err)
	}
}

// TestTokenRateForgetsIdleClients drives token requests from many clients,
// each asking once and never again, and holds the rate limit's table to
// the clients of the last seconds: before, every client that had ever
// asked kept an entry for the life of the process. A client that asks
// again within its second is still limited.
func TestTokenRateForgetsIdleClients(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newService(t, assistant.Config{Now: func() time.Time { return now }, TokenRate: 2})
	ctx := context.Background()
	const rq = "72384bd5-0ca0-4cfd-9ac7-65d75258284c"
	const clients = 40
	most := 0
	for i := range clients {
		c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(700 * time.Millisecond)
		if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		most = max(most, s.TokenRateClients())
		if i == clients-1 {
			// The last client is still counted: its third request in
			// the same second is refused.
			if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); err != nil {
				t.Fatalf("second token: %v", err)
			}
			if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1"); !errors.Is(err, assistant.ErrTokenRate) {
				t.Fatalf("third token in a second: %v, want ErrTokenRate", err)
			}
		}
	}
	// One sweep a second, requests 0.7 s apart: at most the clients of
	// the last two seconds are held.
	if most > 4 {
		t.Fatalf("the token rate limit held %d of %d clients at once, each of which asked once", most, clients)
	}
}

// TestExpiredTokenOutlivesSweep checks that the sweep of expired tokens,
// run every hundredth issuance, keeps a token that expired less than
// ExpiredTokenGrace ago: it is still "Token has expired" (reference §2),
// not "Unauthorized" as an unknown token.
func TestExpiredTokenOutlivesSweep(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newService(t, assistant.Config{Now: func() time.Time { return now }, TokenRate: 1000})
	ctx := context.Background()
	c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	const rq = "72384bd5-0ca0-4cfd-9ac7-65d75258284c"
	issue := func() string {
		t.Helper()
		tok, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, rq, "ASSISTANT_API_CORP", "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// Any hundred issuances in a row include a hundredth, which sweeps.
	sweep := func() {
		for range 100 {
			issue()
		}
	}
	old := issue()
	tests := []struct {
		after time.Duration
		want  error
	}{
		{31 * time.Minute, assistant.ErrTokenExpired},
		{12 * time.Hour, assistant.ErrTokenExpired},
		{assistant.ExpiredTokenGrace + time.Minute, assistant.ErrUnauthorized},
	}
	start := now
	for _, tt := range tests {
		now = start.Add(30*time.Minute + tt.after)
		sweep()
		if _, err := s.Authenticate(ctx, old); !errors.Is(err, tt.want) {
			t.Errorf("%v after expiry and a sweep: %v, want %v", tt.after, err, tt.want)
		}
	}
}

func TestParseBasic(t *testing.T) {
	enc := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		in, id, secret string
		ok             bool
	}{
		{enc("id:se:cret"), "id", "se:cret", true},
		{enc("id:"), "id", "", true},
		{enc("nocolon"), "", "", false},
		{enc(":secret"), "", "", false},
		// The scheme in any case, or none: the spec shows the key alone.
		{"basic " + base64.StdEncoding.EncodeToString([]byte("id:s")), "id", "s", true},
		{"BASIC " + base64.StdEncoding.EncodeToString([]byte("id:s")), "id", "s", true},
		{base64.StdEncoding.EncodeToString([]byte("id:s")), "id", "s", true},
		{"Bearer " + base64.StdEncoding.EncodeToString([]byte("id:s")), "", "", false},
		{"Bearer x", "", "", false},
		{"Basic %%%", "", "", false},
		{"", "", "", false},
		// SP and HTAB are the only white space around the credentials
		// (RFC 9110 §5.6.3); a Unicode space is part of them.
		{" \tBasic \t" + base64.StdEncoding.EncodeToString([]byte("id:s")) + "\t ", "id", "s", true},
		{enc("id:s") + "\u00a0", "", "", false},
		{"\u00a0" + enc("id:s"), "", "", false},
		{"Basic\u00a0" + base64.StdEncoding.EncodeToString([]byte("id:s")), "", "", false},
		{enc("id:s") + "\u0085", "", "", false},
		{enc("id:s") + "\u3000", "", "", false},
	}
	for _, tt := range tests {
		id, secret, err := assistant.ParseBasic(tt.in)
		if (err == nil) != tt.ok || id != tt.id || secret != tt.secret {
			t.Errorf("ParseBasic(%q) = %q %q %v", tt.in, id, secret, err)
		}
	}
}

func FuzzParseBasic(f *testing.F) {
	f.Add("Basic " + base64.StdEncoding.EncodeToString([]byte("a:b")))
	f.Add("Basic !!")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, secret, err := assistant.ParseBasic(s)
		if err != nil {
			return
		}
		if id == "" || strings.Contains(id, ":") {
			t.Fatalf("ParseBasic(%q) id %q", s, id)
		}
		// The credentials are what follows the scheme, which ParseBasic
		// reads in any letter case after leading SP and HTAB (RFC 7235
		// §2.1, RFC 9110 §5.6.3), or the whole value when the scheme is
		// left out; no other white space is trimmed.
		key := strings.Trim(s, " \t")
		if len(key) > 6 && strings.EqualFold(key[:6], "basic ") {
			key = key[6:]
		}
		raw, _ := base64.StdEncoding.DecodeString(strings.Trim(key, " \t"))
		if string(raw) != id+":"+secret {
			t.Fatalf("ParseBasic(%q) = %q:%q, decoded %q", s, id, secret, raw)
		}
	})
}

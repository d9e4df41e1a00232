package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// FuzzRedactURL holds redactURL, which quotes --database-url and
// --smarthome-mqtt in start-up errors, to pgx, the reader of the URL: a
// password pgconn.ParseConfig finds in the text (in the URL's user
// information, in its query, or in a key=value string) is not in what
// redactURL shows, and a URL with a password reads back, with net/url, as
// one whose password is xxxxx.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{
		"postgres://user:secret@host/db", "postgresql://u@h/d?sslmode=require", "postgres://x:hunter2@[bad", "tcp://broker:1883", "ssl://u:p@b:8883",
		"postgres://u:p%40ss@h/d", "postgres://u@h/d?x=a:b@c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shown := redactURL(s)
		// The words of the placeholder are no password shown.
		bare := strings.Replace(shown, "(not shown: it may hold a password)", "", 1)
		if cfg, err := pgconn.ParseConfig(s); err == nil && cfg.Password != "" && strings.Count(s, cfg.Password) == 1 &&
			strings.Contains(bare, cfg.Password) {
			t.Fatalf("redactURL(%q) = %q shows the password %q", s, shown, cfg.Password)
		}
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if _, has := u.User.Password(); !has {
				return
			}
			again, err := url.Parse(shown)
			if err != nil || again.User == nil {
				return // shown as no URL at all
			}
			if p, _ := again.User.Password(); p != "xxxxx" || again.User.Username() != u.User.Username() {
				t.Fatalf("redactURL(%q) = %q, whose user is %q and password %q", s, shown, again.User.Username(), p)
			}
		}
	})
}

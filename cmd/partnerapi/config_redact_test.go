package main

import "testing"

// TestRedactURL: what start-up errors quote of --database-url and
// --smarthome-mqtt shows no password pgx would read: not the part of one
// after an @ in it, not one in the query, not one in a key=value string
// (found by FuzzRedactURL; pgx reads # as a character of the password).
func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://user:secret@host/db", "postgres://user:xxxxx@host/db"},
		{"postgres://user:pa@ss@host:5432/db?sslmode=disable", "postgres://user:xxxxx@host:5432/db?sslmode=disable"},
		{"postgres://host/db?password=secret", "postgres://host/db?password=xxxxx"},
		{"postgresql://u@h/d?sslmode=require&sslpassword=k3y", "postgresql://u@h/d?sslmode=require&sslpassword=xxxxx"},
		{"postgres://u@h/d?PassWord=s", "postgres://u@h/d?PassWord=xxxxx"},
		{"host=db user=u password=secret", "(not shown: it may hold a password)"},
		{"postgres://x:hunter2@[bad", "postgres://(not shown: it may hold a password)"},
		{"postgres://root@127.0.0.1:5432/test?sslmode=disable", "postgres://root@127.0.0.1:5432/test?sslmode=disable"},
		{"tcp://broker:1883", "tcp://broker:1883"},
		{"ssl://u:p@broker:8883", "ssl://u:xxxxx@broker:8883"},
		{"mysql://db", "mysql://db"},
		// pgx reads no fragment: the password here is #secret.
		{"postgres://user:#secret@db/x", "postgres://(not shown: it may hold a password)"},
		{"postgres://user:12#34@db", "postgres://(not shown: it may hold a password)"},
	} {
		if got := redactURL(c.in); got != c.want {
			t.Errorf("redactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

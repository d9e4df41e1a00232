package assistant_test

import (
	"context"
	"errors"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestUploadFileNameText: a file name goes into the store and later into
// chat message content, so one that is not UTF-8 text (a lone surrogate's
// bytes, which RFC 2231 spells %ED%A0%80 in a filename*, or a raw 0xFF) or
// holds a NUL is the client's 400 before anything is stored. Without the
// check PostgreSQL's TEXT column refused the row, which was a 500.
func TestUploadFileNameText(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistant.NewService(assistantsql.New(db), &promptEngine{window: 200}, assistant.Config{})
		c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
		if err != nil {
			t.Fatal(err)
		}
		me := assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopeCorp}
		for _, tc := range []struct {
			name, filename string
			status         int // 0: stored
		}{
			{"lone surrogate", "\xed\xa0\x80.txt", 400},
			{"raw 0xFF", "a\xff.txt", 400},
			{"truncated sequence", "a\xd0.txt", 400},
			{"invalid in a directory only", "\xff/a.txt", 0},
			{"NUL", "a\x00b.txt", 400},
			{"Cyrillic", "отчёт.txt", 0},
			{"emoji", "\U0001F600.txt", 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if f := uploadCounted(t, s, me, tc.filename, tc.status); tc.status == 0 && f.Filename == "" {
					t.Fatalf("stored %+v", f)
				}
			})
		}
	})
}

// TestUploadFileClientIDText: the X-Client-ID a file is bound to is stored
// with it, in a text column, so one that is not UTF-8 (HTTP lets a header
// carry any byte from 0x80 up) is the client's 400 before anything is
// stored, as a file name that is not is; on PostgreSQL it was a 500.
func TestUploadFileClientIDText(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistant.NewService(assistantsql.New(db), &promptEngine{window: 200}, assistant.Config{})
		c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, clientID string
			status         int // 0: stored
		}{
			{"none", "", 0},
			{"UUID", "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f", 0},
			{"UTF-8", "пользователь-1", 0},
			{"raw 0xFF", "user-\xff", 400},
			{"Latin-1 byte", "caf\xe9", 400},
			{"NUL", "a\x00b", 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				me := assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopeCorp, HeaderClientID: tc.clientID}
				uploadCounted(t, s, me, "a.txt", tc.status)
			})
		}
	})
}

// uploadCounted uploads a one-byte file named filename for me and holds
// the outcome to status (0: stored, else the InvalidParams status) and
// the client's file list to one more file exactly when it was stored.
func uploadCounted(t *testing.T, s *assistant.Service, me assistant.Principal, filename string, status int) assistant.File {
	t.Helper()
	ctx := context.Background()
	before, err := s.Files(ctx, me)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.UploadFile(ctx, me, filename, "general", "text/plain", []byte("x"))
	var inv *assistant.InvalidParams
	switch {
	case status != 0 && (!errors.As(err, &inv) || inv.Status != status):
		t.Fatalf("err %v, want status %d", err, status)
	case status == 0 && err != nil:
		t.Fatal(err)
	}
	after, err := s.Files(ctx, me)
	if err != nil {
		t.Fatal(err)
	}
	if stored := len(after) - len(before); (status == 0) != (stored == 1) {
		t.Fatalf("%d files stored", stored)
	}
	return f
}

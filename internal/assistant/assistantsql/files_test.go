package assistantsql_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// clientsAB is a store on db with the clients "a" and "b".
func clientsAB(t *testing.T, db *sqldb.DB) *assistantsql.Store {
	t.Helper()
	s := assistantsql.New(db)
	for _, id := range []string{"a", "b"} {
		if err := s.CreateClient(context.Background(), assistant.Client{ID: id, SecretHash: "h", Scope: assistant.ScopeCorp, CreatedAt: time.Unix(1, 0)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Files keep their bytes exactly (NUL and high bytes included), belong to
// their client only, list in the order they were stored (f2's earlier
// created_at does not move it first), and are gone after a delete.
func TestFileStoreConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := clientsAB(t, db)
		content := []byte("\x00\x01binary\xff\xfe text")
		f1 := assistant.File{ID: "f1", ClientID: "a", Filename: "x.bin", Purpose: "general", MediaType: "application/octet-stream",
			Bytes: int64(len(content)), CreatedAt: time.Unix(200, 0)}
		f2 := assistant.File{ID: "f2", ClientID: "a", Filename: "y.txt", Purpose: "assistant", MediaType: "text/plain", Bytes: 2, CreatedAt: time.Unix(100, 0)}
		for _, f := range []struct {
			f assistant.File
			b []byte
		}{{f1, content}, {f2, []byte("hi")}} {
			if err := s.SaveFile(ctx, f.f, f.b, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveFile(ctx, f1, content, 0); err == nil {
			t.Fatal("a second file with the same id was stored")
		}
		got, err := s.File(ctx, "a", "f1")
		if err != nil || got != f1 {
			t.Fatalf("File = %+v, %v; want %+v", got, err, f1)
		}
		withBytes, b, err := s.FileContent(ctx, "a", "f1")
		if err != nil || !bytes.Equal(b, content) || withBytes != f1 {
			t.Fatalf("FileContent = %q, %v", b, err)
		}
		list, err := s.Files(ctx, "a")
		if err != nil || len(list) != 2 || list[0].ID != "f1" || list[1].ID != "f2" {
			t.Fatalf("Files = %+v, %v", list, err)
		}
		if list, err := s.Files(ctx, "b"); err != nil || len(list) != 0 || list == nil {
			t.Fatalf("another client's list = %#v, %v", list, err)
		}
		// Another client reaches none of it.
		if _, err := s.File(ctx, "b", "f1"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("File by another client: %v", err)
		}
		if _, _, err := s.FileContent(ctx, "b", "f1"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("FileContent by another client: %v", err)
		}
		if err := s.DeleteFile(ctx, "b", "f1"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("DeleteFile by another client: %v", err)
		}
		if err := s.DeleteFile(ctx, "a", "f1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.File(ctx, "a", "f1"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("File after delete: %v", err)
		}
		if err := s.DeleteFile(ctx, "a", "f1"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("second delete: %v", err)
		}
	})
}

// The quota holds a client's files to a total: a file that would go over
// it is refused and leaves nothing behind, another client's files do not
// count, a delete makes room, and uploads racing for the last room do not
// both get it (the usage row serialises them on both databases).
func TestFileQuotaConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := clientsAB(t, db)
		file := func(client, id string, n int) (assistant.File, []byte) {
			return assistant.File{ID: id, ClientID: client, Filename: id + ".txt", Purpose: "general", MediaType: "text/plain",
				Bytes: int64(n), CreatedAt: time.Unix(100, 0)}, bytes.Repeat([]byte("x"), n)
		}
		const quota = 10
		save := func(client, id string, n int) error {
			f, b := file(client, id, n)
			return s.SaveFile(ctx, f, b, quota)
		}
		for _, c := range []struct {
			client, id string
			n          int
			want       error
		}{
			{"a", "a1", 6, nil},
			{"a", "a2", 4, nil}, // exactly the quota
			{"a", "a3", 1, assistant.ErrFileQuota},
			{"b", "b1", 10, nil}, // a's files do not count for b
		} {
			if err := save(c.client, c.id, c.n); !errors.Is(err, c.want) {
				t.Fatalf("save %s (%d bytes): %v, want %v", c.id, c.n, err, c.want)
			}
		}
		if _, err := s.File(ctx, "a", "a3"); !errors.Is(err, assistant.ErrNoSuchFile) {
			t.Fatalf("a refused file was stored: %v", err)
		}
		if err := s.DeleteFile(ctx, "a", "a1"); err != nil {
			t.Fatal(err)
		}
		// The delete freed a1's 6 bytes, and no more.
		if err := save("a", "a4", 7); !errors.Is(err, assistant.ErrFileQuota) {
			t.Fatalf("7 bytes into 6 of room: %v", err)
		}
		if err := save("a", "a4", 6); err != nil {
			t.Fatal(err)
		}
		// Without a quota the usage is still counted, so a quota set
		// later sees the files stored before it.
		f, b := file("b", "b2", 5)
		if err := s.SaveFile(ctx, f, b, 0); err != nil {
			t.Fatal(err)
		}
		if err := save("b", "b3", 1); !errors.Is(err, assistant.ErrFileQuota) {
			t.Fatalf("b over its quota after an unlimited upload: %v", err)
		}
		// Eight uploads of 4 bytes race for b's room after two deletes
		// (10 bytes): exactly two fit.
		for _, id := range []string{"b1", "b2"} {
			if err := s.DeleteFile(ctx, "b", id); err != nil {
				t.Fatal(err)
			}
		}
		errs := make(chan error, 8)
		for i := range 8 {
			go func() { errs <- save("b", fmt.Sprintf("r%d", i), 4) }()
		}
		stored := 0
		for range 8 {
			switch err := <-errs; {
			case err == nil:
				stored++
			case !errors.Is(err, assistant.ErrFileQuota):
				t.Fatalf("racing upload: %v", err)
			}
		}
		list, err := s.Files(ctx, "b")
		if err != nil || stored != 2 || len(list) != 2 {
			t.Fatalf("racing uploads stored %d, listed %d (%v); want 2", stored, len(list), err)
		}
	})
}

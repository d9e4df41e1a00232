package assistantsql_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Files keep their bytes exactly (NUL and high bytes included), belong to
// their client only, list in the order they were stored (f2's earlier
// created_at does not move it first), and are gone after a delete.
func TestFileStoreConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		for _, id := range []string{"a", "b"} {
			if err := s.CreateClient(ctx, assistant.Client{ID: id, SecretHash: "h", Scope: assistant.ScopeCorp, CreatedAt: time.Unix(1, 0)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		content := []byte("\x00\x01binary\xff\xfe text")
		f1 := assistant.File{ID: "f1", ClientID: "a", Filename: "x.bin", Purpose: "general", MediaType: "application/octet-stream",
			Bytes: int64(len(content)), CreatedAt: time.Unix(200, 0)}
		f2 := assistant.File{ID: "f2", ClientID: "a", Filename: "y.txt", Purpose: "assistant", MediaType: "text/plain", Bytes: 2, CreatedAt: time.Unix(100, 0)}
		for _, f := range []struct {
			f assistant.File
			b []byte
		}{{f1, content}, {f2, []byte("hi")}} {
			if err := s.SaveFile(ctx, f.f, f.b); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveFile(ctx, f1, content); err == nil {
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

package assistantsql

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Migration 0003 counts the files stored before it: a client whose earlier
// files already fill its quota gets no more room, one with room left gets
// exactly that room, and a client without files starts at zero.
func TestFileUsageMigration(t *testing.T) {
	upTo2 := func(ctx context.Context, db *sqldb.DB) error {
		sub, err := fs.Sub(migrations, "migrations")
		if err != nil {
			return err
		}
		files, err := sqldb.MigrationsUpTo(sub, 2)
		if err != nil {
			return err
		}
		return db.Migrate(ctx, "assistant", files)
	}
	storetest.Each(t, upTo2, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		for _, c := range []string{"full", "room", "none"} {
			if _, err := db.W.ExecContext(ctx, `INSERT INTO assistant_clients (id, secret_hash, scope, created_at) VALUES ($1, 'h', 'ASSISTANT_API_CORP', 1)`, c); err != nil {
				t.Fatal(err)
			}
		}
		for i, f := range []struct {
			client string
			bytes  int64
		}{{"full", 6}, {"full", 4}, {"room", 3}} {
			if _, err := db.W.ExecContext(ctx, `INSERT INTO assistant_files (id, client_id, filename, purpose, media_type, bytes, created_at, content)
				VALUES ($1, $2, 'a.txt', 'general', 'text/plain', $3, 1, $4)`, string(rune('a'+i)), f.client, f.bytes, make([]byte, f.bytes)); err != nil {
				t.Fatal(err)
			}
		}
		if err := Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := New(db)
		save := func(client, id string, n int64) error {
			return s.SaveFile(ctx, assistant.File{ID: id, ClientID: client, Filename: "b.txt", Purpose: "general", MediaType: "text/plain",
				Bytes: n, CreatedAt: time.Unix(2, 0)}, make([]byte, n), 10)
		}
		for _, c := range []struct {
			client, id string
			n          int64
			want       error
		}{
			{"full", "f1", 1, assistant.ErrFileQuota},
			{"room", "r1", 8, assistant.ErrFileQuota},
			{"room", "r2", 7, nil},
			{"none", "n1", 10, nil},
		} {
			if err := save(c.client, c.id, c.n); !errors.Is(err, c.want) {
				t.Fatalf("%s saves %d bytes: %v, want %v", c.client, c.n, err, c.want)
			}
		}
	})
}

package assistantsql

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"partnerapi/internal/assistant"
)

// SaveFile stores an uploaded file and its bytes in one row, and adds them
// to the client's usage row in the same transaction. The usage upsert
// carries the quota in its condition: the row it updates is locked until
// the commit, so two concurrent uploads cannot both fit into the room left
// for one. A client's first file is checked against the quota by the
// service (its row does not exist yet, so the insert has no condition).
func (s *Store) SaveFile(ctx context.Context, f assistant.File, content []byte, quota int64) error {
	if quota <= 0 {
		quota = math.MaxInt64
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO assistant_file_usage (client_id, bytes) VALUES ($1, $2)
			ON CONFLICT (client_id) DO UPDATE SET bytes = assistant_file_usage.bytes + excluded.bytes
			WHERE assistant_file_usage.bytes <= $3 - excluded.bytes`, f.ClientID, f.Bytes, quota)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return assistant.ErrFileQuota
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO assistant_files (id, client_id, filename, purpose, media_type, bytes, created_at, header_client_id, content)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			f.ID, f.ClientID, f.Filename, f.Purpose, f.MediaType, f.Bytes, f.CreatedAt.Unix(), f.HeaderClientID, content)
		return err
	})
}

const fileColumns = `id, client_id, filename, purpose, media_type, bytes, created_at, header_client_id`

// scanFile reads fileColumns, then any further columns into extra.
func scanFile(row interface{ Scan(...any) error }, extra ...any) (assistant.File, error) {
	var f assistant.File
	var created int64
	err := row.Scan(append([]any{&f.ID, &f.ClientID, &f.Filename, &f.Purpose, &f.MediaType, &f.Bytes, &created, &f.HeaderClientID}, extra...)...)
	f.CreatedAt = time.Unix(created, 0)
	return f, err
}

// File returns one of the client's files; another client's is not found.
func (s *Store) File(ctx context.Context, clientID, id string) (assistant.File, error) {
	f, err := scanFile(s.db.R.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM assistant_files WHERE id = $1 AND client_id = $2`, id, clientID))
	if errors.Is(err, sql.ErrNoRows) {
		return f, assistant.ErrNoSuchFile
	}
	return f, err
}

// Files lists the client's files in the order they were stored.
func (s *Store) Files(ctx context.Context, clientID string) ([]assistant.File, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+fileColumns+` FROM assistant_files WHERE client_id = $1 ORDER BY seq`, clientID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []assistant.File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FileContent returns one of the client's files with its bytes, in one
// query.
func (s *Store) FileContent(ctx context.Context, clientID, id string) (assistant.File, []byte, error) {
	var b []byte
	f, err := scanFile(s.db.R.QueryRowContext(ctx, `SELECT `+fileColumns+`, content FROM assistant_files WHERE id = $1 AND client_id = $2`, id, clientID), &b)
	if errors.Is(err, sql.ErrNoRows) {
		return f, nil, assistant.ErrNoSuchFile
	}
	return f, b, err
}

// DeleteFile removes one of the client's files.
func (s *Store) DeleteFile(ctx context.Context, clientID, id string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int64
		err := tx.QueryRowContext(ctx, `DELETE FROM assistant_files WHERE id = $1 AND client_id = $2 RETURNING bytes`, id, clientID).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return assistant.ErrNoSuchFile
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE assistant_file_usage SET bytes = bytes - $1 WHERE client_id = $2`, n, clientID)
		return err
	})
}

package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// BenchmarkCopyBatch is the PostgreSQL committer's COPY of a batch of
// walked documents, as bench banking's creates make them, through
// copyPayments (the rows encoded in the caller's goroutine and sent through
// pgconn) and, for comparison, through pgx's CopyFrom (copyPaymentsPgx,
// what copyPayments was). ns/op and allocs/op are a batch's; cpu-µs/doc is
// this process's CPU per document, the server's excluded. It needs
// PARTNERAPI_TEST_DATABASE_URL.
func BenchmarkCopyBatch(b *testing.B) {
	for _, size := range []int{16, 64} {
		for _, w := range []struct {
			name string
			copy func(context.Context, *sql.DB, []*newPayment) error
		}{{"pgconn", copyPayments}, {"pgx", copyPaymentsPgx}} {
			b.Run(fmt.Sprintf("%d/%s", size, w.name), func(b *testing.B) { benchCopyBatch(b, size, w.copy) })
		}
	}
}

func benchCopyBatch(b *testing.B, size int, write func(context.Context, *sql.DB, []*newPayment) error) {
	ctx := context.Background()
	db := storetest.Postgres(b)
	if err := MigratePayments(ctx, db); err != nil {
		b.Fatal(err)
	}
	sp0 := storedPayment("3d5a0f4e-8b1c-4f7a-9e2d-5c6b7a8d9e01", "")
	sp0.Status, sp0.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
	doc, err := json.Marshal(sp0.Doc)
	if err != nil {
		b.Fatal(err)
	}
	seq := 0
	batches := func(n int) [][]*newPayment {
		out := make([][]*newPayment, n)
		now := time.Now()
		for i := range out {
			out[i] = make([]*newPayment, size)
			for j := range out[i] {
				seq++
				sp := *sp0
				sp.Doc.ExternalID = fmt.Sprintf("%08x-0000-4000-8000-000000000001", seq)
				sp.CreatedAt, sp.UpdatedAt = now, now
				out[i][j] = newWalkedPayment(&sp, string(doc), now)
			}
		}
		return out
	}
	// Each batch runs under a deadline of its own, as the group commit's
	// do (GroupCommit.tx): pgconn watches such a context while it waits.
	run := func(batch []*newPayment) {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := write(wctx, db.W, batch); err != nil {
			b.Fatal(err)
		}
	}
	// A first batch opens the connection and fills pgx's statement cache.
	for _, batch := range batches(4) {
		run(batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for done := 0; done < b.N; {
		b.StopTimer()
		chunk := batches(min(64, b.N-done))
		b.StartTimer()
		cpu0 := testenv.ProcessCPU()
		for _, batch := range chunk {
			run(batch)
		}
		cpu += testenv.ProcessCPU() - cpu0
		done += len(chunk)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*size)/1e3, "cpu-µs/doc")
}

// copyPaymentsPgx is copyPayments as it was written with pgx's CopyFrom,
// the benchmark's point of comparison.
func copyPaymentsPgx(ctx context.Context, pool *sql.DB, batch []*newPayment) error {
	columns := []string{"org_id", "external_id", "kind", "doc", "kopecks", "status", "comment", "roles", "channel", "created_at", "updated_at", "walked_at"}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		vals := make([]any, len(columns))
		n, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"banking_payments"}, columns, pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			p := batch[i]
			sp := p.sp
			vals[0], vals[1], vals[2], vals[3] = sp.OrgID, p.key, string(sp.Kind), p.doc
			vals[4], vals[5], vals[6], vals[7] = sp.Kopecks, sp.Status, sp.Comment, p.roles
			vals[8], vals[9], vals[10], vals[11] = sp.Channel, p.created, p.updated, p.walkedAt
			return vals, nil
		}))
		if err == nil && n != int64(len(batch)) {
			err = fmt.Errorf("copied %d of %d documents", n, len(batch))
		}
		return err
	})
}

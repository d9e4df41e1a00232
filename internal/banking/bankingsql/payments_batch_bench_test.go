package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// BenchmarkWritePaymentBatch is the SQLite committer's own work on batches
// of walked documents, as bench banking's creates make them: the
// transaction, the inserts and the commit with its fsync, without the
// goroutines that queue them or the building of their rows (their callers'
// work). cpu-µs/doc is the process CPU per document, the checkpointer's
// included; a batch's fixed cost (BEGIN, COMMIT, the WAL's writes and fsync)
// shows in how it falls with the batch size.
func BenchmarkWritePaymentBatch(b *testing.B) {
	for _, size := range []int{8, 32, 128} {
		b.Run(fmt.Sprint(size), func(b *testing.B) { benchWritePaymentBatch(b, size) })
	}
}

func benchWritePaymentBatch(b *testing.B, size int) {
	ctx := context.Background()
	db := storetest.SQLite(b)
	if err := MigratePayments(ctx, db); err != nil {
		b.Fatal(err)
	}
	write := writePayments(&batchStatements{db: db})
	sp0 := storedPayment("3d5a0f4e-8b1c-4f7a-9e2d-5c6b7a8d9e01", "")
	sp0.Status, sp0.Roles = banking.StatusImplemented, []banking.SignatureRole{"SOLE"}
	doc, err := json.Marshal(sp0.Doc)
	if err != nil {
		b.Fatal(err)
	}
	seq := 0
	// batches makes n batches of fresh ascending keys, as bench banking
	// sends them.
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
	run := func(batch []*newPayment) {
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			_, err := write(ctx, tx, batch)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	// The statements are prepared by goroutines once the writer is free:
	// let every shape the batches use get prepared first.
	for _, batch := range batches(20) {
		run(batch)
		time.Sleep(5 * time.Millisecond)
	}
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

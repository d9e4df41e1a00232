package bankingsql

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// BenchmarkCreatePayment measures the store alone: b.N documents created by
// 64 goroutines, each with the seven-step walk of a signed document (its
// walked_at; the webhook it implies is not written by the create), and
// reports the group commit's mean batch.
func BenchmarkCreatePayment(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			var db *sqldb.DB
			if engine == "sqlite" {
				db = storetest.SQLite(b)
			} else {
				db = storetest.Postgres(b)
			}
			if err := MigratePayments(context.Background(), db); err != nil {
				b.Fatal(err)
			}
			s := NewPaymentStore(db)
			var seq atomic.Int64
			// The handler hands the store the document's JSON ready made.
			doc, err := json.Marshal(storedPayment("org1", "00000000-0000-4000-8000-000000000001").Doc)
			if err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(32)
			cpu0 := testenv.ProcessCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					now := time.Now()
					hist := make([]banking.StatusChange, len(banking.ProcessingPath))
					for i, st := range banking.ProcessingPath {
						hist[i] = banking.StatusChange{Status: st, At: now}
					}
					// Ascending fixed-width ids, as bench banking sends.
					sp := storedPayment("org1", fmt.Sprintf("%08x-0000-4000-8000-000000000001", seq.Add(1)))
					sp.Status = banking.StatusImplemented
					sp.DocJSON = doc
					if err := s.CreatePayment(context.Background(), sp, hist); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			// The bench banking figure is CPU-bound, so the process CPU per
			// document is what a change to the store must lower; wall time
			// here is mostly waiting for fsync.
			b.ReportMetric(float64((testenv.ProcessCPU()-cpu0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/doc")
			st := db.GroupCommitStats()
			b.ReportMetric(float64(st.Items)/float64(max(st.Batches, 1)), "docs/batch")
		})
	}
}

package homeapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homeapi"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler stack and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

// SetWriteDeadline lets the platform's write deadline succeed as it does
// on a real connection.
func (w *discardWriter) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkCatalogRead runs one catalog read through the whole platform
// stack in process (no network), next to a bare handler writing the same
// bytes; ns/op and allocs/op show what the stack adds per request.
func BenchmarkCatalogRead(b *testing.B) {
	ctx := context.Background()
	db := storetest.SQLite(b)
	if err := homesql.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		b.Fatal(err)
	}
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "bench")
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
	metrics := web.NewMetrics("bench")
	full := web.API{Name: "smarthome", Handler: homeapi.NewServer(homeapi.Deps{Metrics: metrics, Service: svc}),
		Errors: homeapi.ErrorWriter(), Prepare: homeapi.FoldSlashes}.Build(log, metrics)
	req := httptest.NewRequest("GET", "/v1/mqtt-gate/categories/light/features", nil)
	req.SetBasicAuth("bench", pw)
	w := &discardWriter{h: http.Header{}}
	full.ServeHTTP(w, req)
	if w.status != 0 && w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
	body := []byte(`{"features":[]}`)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"full", full}, {"bare", bare}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := &discardWriter{h: http.Header{}}
				r := req.Clone(ctx)
				bc.h.ServeHTTP(w, r)
			}
		})
	}
}

package bankapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

// TestClientGoneIsNotAnUnexpectedError checks that a request whose client
// hung up while its store call ran (found by the soak test: a PUT of the
// webhook setting cut short by its client) is answered 499 with no error
// line, while the same error with the client still there, and any other
// error, stays an unexpected error: 500 and an error line.
func TestClientGoneIsNotAnUnexpectedError(t *testing.T) {
	storeErr := fmt.Errorf("update partner webhook: end webhook pause: %w", context.Canceled)
	for _, tc := range []struct {
		name       string
		clientGone bool
		err        error
		status     int
		errorLine  bool
	}{
		{"client gone, store call cancelled", true, storeErr, web.StatusClientClosedRequest, false},
		{"client there, store call cancelled", false, storeErr, http.StatusInternalServerError, true},
		{"client gone, other error", true, fmt.Errorf("boom"), http.StatusInternalServerError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testenv.LogBuffer{}
			log := slog.New(web.NewTextHandler(logs, nil))
			ctx, cancel := context.WithCancel(context.Background())
			if tc.clientGone {
				cancel()
			} else {
				defer cancel()
			}
			r := httptest.NewRequest("PUT", webhookBase, nil).WithContext(ctx)
			w := httptest.NewRecorder()
			writeError(w, r, log, tc.err)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if got := strings.Contains(logs.String(), "level=ERROR"); got != tc.errorLine {
				t.Fatalf("error line %v, want %v:\n%s", got, tc.errorLine, logs.String())
			}
		})
	}
}

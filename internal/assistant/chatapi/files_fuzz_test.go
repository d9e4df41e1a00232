package chatapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzReadEmptyObject holds the body of POST /files/{id}/delete to what
// readEmptyObject promises: no body at all (JSON white space only, RFC
// 8259 §2) or one JSON object passes, anything else is a 400. The fuzzed
// text is at most 256 bytes behind up to 2 KiB of JSON white space, as in
// FuzzDecodeJSON, so that the minimizer does not stall the run.
func FuzzReadEmptyObject(f *testing.F) {
	for _, s := range []string{"", " \r\n\t", "{}", ` {"a":1} `, "null", "[]", "{}}", "{} {}", "x", "\"{}\"", "{}\f"} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(600))
	}
	f.Fuzz(func(t *testing.T, s string, pad uint16) {
		if len(s) > 256 {
			return
		}
		body := strings.Repeat(" \t\r\n"[pad%4:pad%4+1], int(pad%2048)) + s
		trimmed := strings.Trim(body, " \t\r\n")
		want := trimmed == "" || (json.Valid([]byte(body)) && trimmed[0] == '{')
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/files/f/delete", strings.NewReader(body))
		got := (&server{}).readEmptyObject(rec, req)
		if got != want {
			t.Fatalf("readEmptyObject(%q) = %v, want %v", body, got, want)
		}
		if !got && rec.Code != http.StatusBadRequest {
			t.Fatalf("readEmptyObject(%q) refused with %d, not 400", body, rec.Code)
		}
	})
}

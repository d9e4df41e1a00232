package chatapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadEmptyObject: the body of a file deletion is nothing, JSON white
// space, or one JSON object; other white space is not nothing (found by
// FuzzReadEmptyObject: "\v" and "\u00a0" were taken as no body).
func TestReadEmptyObject(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{"", true},
		{" \t\r\n", true},
		{"{}", true},
		{` {"purpose":"general"} `, true},
		{"\v", false},
		{"\f", false},
		{"\u00a0", false},
		{"\u2028", false},
		{"\u00a0{}", false},
		{"[]", false},
		{"null", false},
		{"{}}", false},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/files/f/delete", strings.NewReader(c.body))
		if got := (&server{}).readEmptyObject(rec, req); got != c.ok || (!got && rec.Code != http.StatusBadRequest) {
			t.Errorf("readEmptyObject(%q) = %v (%d), want %v", c.body, got, rec.Code, c.ok)
		}
	}
}

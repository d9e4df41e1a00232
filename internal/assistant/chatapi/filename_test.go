package chatapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// TestUploadFileNameNotText: a multipart file name that does not decode to
// UTF-8 text, whether spelled with RFC 2231's filename* (a lone
// surrogate's bytes, %ED%A0%80) or sent as raw bytes, is the API's 400 in
// its own envelope, and no file is stored; a UTF-8 name in either
// spelling is kept as sent.
func TestUploadFileNameNotText(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	for _, tc := range []struct {
		name, disposition string
		status            int
		filename          string // the name kept, when stored
	}{
		{"RFC 2231 lone surrogate", `form-data; name="file"; filename*=UTF-8''%ED%A0%80.txt`, 400, ""},
		{"RFC 2231 0xFF", `form-data; name="file"; filename*=UTF-8''a%FF.txt`, 400, ""},
		{"RFC 2231 NUL", `form-data; name="file"; filename*=UTF-8''a%00.txt`, 400, ""},
		{"raw 0xFF", "form-data; name=\"file\"; filename=\"a\xff.txt\"", 400, ""},
		{"RFC 2231 Cyrillic", `form-data; name="file"; filename*=UTF-8''%D0%B0.txt`, 200, "а.txt"},
		{"raw UTF-8", `form-data; name="file"; filename="а.txt"`, 200, "а.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "--b\r\nContent-Disposition: " + tc.disposition + "\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n"
			req, _ := http.NewRequest("POST", f.url+"/api/v1/files", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
			resp, got := f.do(req)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, got, tc.status)
			}
			if tc.status != 200 {
				var e errorBody
				if json.Unmarshal(got, &e) != nil || e.Status != tc.status || e.Message == "" {
					t.Fatalf("body %s, want the API's error envelope", got)
				}
				return
			}
			var file wireFile
			if json.Unmarshal(got, &file) != nil || file.Filename != tc.filename {
				t.Fatalf("body %s, want filename %q", got, tc.filename)
			}
		})
	}
	// Only the two UTF-8 uploads were stored.
	resp, got := f.call("GET", "/api/v1/files", tok, "")
	var list struct{ Data []wireFile }
	if resp.StatusCode != 200 || json.Unmarshal(got, &list) != nil || len(list.Data) != 2 {
		t.Fatalf("files: %d %s, want the two UTF-8 uploads", resp.StatusCode, got)
	}
}

// TestUploadClientIDNotText: an X-Client-ID that is not UTF-8 (HTTP lets
// a header carry bytes from 0x80 up) would be stored with the file it
// binds, so its upload is the API's 400 in its own envelope.
func TestUploadClientIDNotText(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n"
	req, _ := http.NewRequest("POST", f.url+"/api/v1/files", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	req.Header.Set("X-Client-ID", "caf\xe9")
	resp, got := f.do(req)
	var e errorBody
	if resp.StatusCode != 400 || json.Unmarshal(got, &e) != nil || e.Status != 400 || !strings.Contains(e.Message, "X-Client-ID") {
		t.Fatalf("%d %s, want 400 naming X-Client-ID", resp.StatusCode, got)
	}
}

package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"

	"partnerapi/internal/assistant"
)

// TestFileDownloadClientID: X-Client-ID is optional on every call
// (reference §2, §6), but a file uploaded under one is downloaded
// (GET /files/{id}/content, the npm client's getImage) only by a request
// that sends the same (§2: "X-Client-ID must match for image download");
// a file uploaded without one is anyone's of the token's client. Any other
// request is 404 No such file, as another client's file is. Only the
// download is bound: the file's description and its deletion are not.
func TestFileDownloadClientID(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	upload := func(clientID string) string {
		t.Helper()
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		part, _ := mw.CreateFormFile("file", "pic.png")
		part.Write([]byte("\x89PNG\r\n\x1a\n"))
		mw.Close()
		req, _ := http.NewRequest("POST", f.url+"/api/v1/files", &buf)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if clientID != "" {
			req.Header.Set("X-Client-ID", clientID)
		}
		resp, body := f.do(req)
		var file struct{ ID string }
		if resp.StatusCode != 200 || json.Unmarshal(body, &file) != nil || file.ID == "" {
			t.Fatalf("upload: %d %s", resp.StatusCode, body)
		}
		return file.ID
	}
	bound, free := upload("end-user-1"), upload("")
	// A UUID is one id in either letter case (assistant.NormalizeClientID),
	// at the upload and at the download alike.
	const lowerUUID, upperUUID = "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f", "6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6F"
	byUpper, byLower := upload(upperUUID), upload(lowerUUID)
	get := func(path, clientID string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", f.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if clientID != "" {
			req.Header.Set("X-Client-ID", clientID)
		}
		return f.do(req)
	}
	for _, tc := range []struct {
		name, file, clientID string
		status               int
	}{
		{"bound, same id", bound, "end-user-1", 200},
		{"bound, another id", bound, "end-user-2", 404},
		{"bound, no id", bound, "", 404},
		{"bound, id in another letter case", bound, "END-USER-1", 404},
		{"bound to an upper-case UUID, sent in lower case", byUpper, lowerUUID, 200},
		{"bound to an upper-case UUID, sent in mixed case", byUpper, "6f9C1e2A-3b4D-4c5E-8f70-1A2b3C4d5E6f", 200},
		{"bound to a lower-case UUID, sent in upper case", byLower, upperUUID, 200},
		{"bound to a UUID, another UUID", byLower, "00000000-0000-4000-8000-000000000000", 404},
		{"bound to a UUID, no id", byUpper, "", 404},
		{"unbound, no id", free, "", 200},
		{"unbound, an id", free, "end-user-2", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get("/api/v1/files/"+tc.file+"/content", tc.clientID)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status == 404 {
				var e errorBody
				if json.Unmarshal(body, &e) != nil || e.Status != 404 || e.Message != "No such file" {
					t.Errorf("body %s, want {status 404, No such file}", body)
				}
			}
		})
	}
	// The upload stores the id as the download compares it, so the
	// database holds one spelling of a UUID.
	t.Run("UUID stored in lower case", func(t *testing.T) {
		p, err := f.svc.Authenticate(context.Background(), tok)
		if err != nil {
			t.Fatal(err)
		}
		if file, err := f.svc.File(context.Background(), p, byUpper); err != nil || file.HeaderClientID != lowerUUID {
			t.Fatalf("stored X-Client-ID %q, %v; want %q", file.HeaderClientID, err, lowerUUID)
		}
	})
	t.Run("description without the id", func(t *testing.T) {
		if resp, body := get("/api/v1/files/"+bound, ""); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
}

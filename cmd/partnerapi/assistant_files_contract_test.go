package main

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// multipartBody is a form with parts (name → value) and, unless filename is
// empty, a file part "file" of the given type; it returns the body and its
// Content-Type.
func multipartBody(t *testing.T, filename, mediaType string, content []byte, parts map[string]string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if filename != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
		h.Set("Content-Type", mediaType)
		p, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		p.Write(content)
	}
	for k, v := range parts {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), w.FormDataContentType()
}

// uploadFile posts a file as the client whose Authorization value is
// named auth and returns its id.
func (f *contractFixture) uploadFile(t *testing.T, auth, filename, mediaType string, content []byte) string {
	t.Helper()
	body, ctype := multipartBody(t, filename, mediaType, content, map[string]string{"purpose": "general"})
	req, _ := http.NewRequest("POST", f.base+"/api/v1/files", strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", f.auth[auth])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var file struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&file); err != nil || resp.StatusCode != 200 || file.ID == "" {
		t.Fatalf("upload %s: %d %v", filename, resp.StatusCode, err)
	}
	return file.ID
}

// fileCases covers the files operations, attachments and the AI check
// (reference §3.9):
// a text file and an image uploaded by the corp client, a file of the pers
// client that corp must not reach.
func fileCases(t *testing.T, f *contractFixture, chat func(model, extra string) string) []contractCase {
	text := f.uploadFile(t, "corp", "notes.txt", "text/plain", []byte("The dragon's name is Blue."))
	image := f.uploadFile(t, "corp", "pic.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	doomed := f.uploadFile(t, "corp", "old.txt", "text/plain", []byte("to be deleted"))
	other := f.uploadFile(t, "pers", "theirs.txt", "text/plain", []byte("not yours"))
	upload, uploadType := multipartBody(t, "story.md", "text/markdown", []byte("# Once\nupon a time"), map[string]string{"purpose": "assistant"})
	noFile, noFileType := multipartBody(t, "", "", nil, map[string]string{"purpose": "general"})
	badPurpose, badPurposeType := multipartBody(t, "a.txt", "text/plain", []byte("x"), map[string]string{"purpose": "secret"})
	// One byte over the 40 MiB a file may have (the form around it stays
	// under the path's body cap, so the service itself refuses it).
	big, bigType := multipartBody(t, "big.txt", "text/plain", bytes.Repeat([]byte("x"), 40<<20+1), nil)
	const files, check = "/api/v1/files", "/api/v1/ai/check"
	attach := func(ids ...string) string {
		b, _ := json.Marshal(ids)
		return `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time","attachments":` + string(b) + `}],"temperature":0,"max_tokens":8}`
	}
	return []contractCase{
		{name: "file upload", method: "POST", path: files, auth: "corp", ctype: uploadType, body: upload, status: 200},
		// The contract's schema refuses these two, but libopenapi-validator
		// does not look inside multipart bodies, so they are not marked
		// badRequest and serverOnly says why; the server's 400 is what is
		// checked.
		{name: "file upload without a file", method: "POST", path: files, auth: "corp", ctype: noFileType, body: noFile, status: 400, serverOnly: multipartUnread},
		{name: "file upload unknown purpose", method: "POST", path: files, auth: "corp", ctype: badPurposeType, body: badPurpose, status: 400, serverOnly: multipartUnread},
		{name: "file upload not multipart", method: "POST", path: files, auth: "corp", body: `{"file":"x"}`, status: 400, badRequest: true},
		{name: "file upload without token", method: "POST", path: files, ctype: uploadType, body: upload, status: 401, badRequest: true},
		{name: "file upload over the size limit", method: "POST", path: files, auth: "corp", ctype: bigType, body: big, status: 413},
		{name: "files", method: "GET", path: files, auth: "corp", status: 200},
		{name: "files without token", method: "GET", path: files, status: 401, badRequest: true},
		{name: "file", method: "GET", path: files + "/" + text, auth: "corp", status: 200},
		{name: "file of another client", method: "GET", path: files + "/" + other, auth: "corp", status: 404},
		{name: "file without token", method: "GET", path: files + "/" + text, status: 401, badRequest: true},
		{name: "file content", method: "GET", path: files + "/" + image + "/content", auth: "corp", status: 200},
		{name: "file content of another client", method: "GET", path: files + "/" + other + "/content", auth: "corp", status: 404},
		{name: "file content without token", method: "GET", path: files + "/" + image + "/content", status: 401, badRequest: true},
		{name: "file delete", method: "POST", path: files + "/" + doomed + "/delete", auth: "corp", body: `{}`, status: 200},
		{name: "file delete again", method: "POST", path: files + "/" + doomed + "/delete", auth: "corp", body: `{}`, status: 404},
		{name: "file delete of another client", method: "POST", path: files + "/" + other + "/delete", auth: "corp", body: `{}`, status: 404},
		{name: "file delete without token", method: "POST", path: files + "/" + text + "/delete", body: `{}`, status: 401, badRequest: true},
		// A malformed body is refused and the file kept: the next rows
		// still read it.
		{name: "file delete with a body not JSON", method: "POST", path: files + "/" + text + "/delete", auth: "corp", body: `{"a":`, status: 400, badRequest: true},
		{name: "file delete with a body over the limit", method: "POST", path: files + "/" + text + "/delete", auth: "corp", body: overLimit(`{}`), status: 413},
		{name: "chat with a text attachment", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: attach(text), status: 200},
		{name: "chat with an image attachment", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: attach(image), status: 422},
		{name: "chat with another client's attachment", method: "POST", path: "/api/v1/chat/completions", auth: "corp", body: attach(other), status: 400,
			serverOnly: "the attachment is a well-formed id, of another client's file"},

		{name: "ai check", method: "POST", path: check, auth: "corp", body: aiCheck("stories260K", "Once upon a time, there was a little girl named Lily."), status: 200},
		{name: "ai check without input", method: "POST", path: check, auth: "corp", body: `{"model":"stories260K"}`, status: 400, badRequest: true},
		{name: "ai check without token", method: "POST", path: check, body: aiCheck("stories260K", "x y"), status: 401, badRequest: true},
		{name: "ai check no balance", method: "POST", path: check, auth: "broke", body: aiCheck("stories260K", "Once upon a time"), status: 402},
		{name: "ai check unknown model", method: "POST", path: check, auth: "corp", body: aiCheck("nope", "Once upon a time"), status: 404},
		{name: "ai check over the window", method: "POST", path: check, auth: "corp", body: aiCheck("stories260K", strings.Repeat("Once upon a time. ", 700)), status: 413},
		{name: "ai check embedder", method: "POST", path: check, auth: "corp", body: aiCheck("tinyembed", "Once upon a time"), status: 422},
		{name: "ai check over the concurrency limit", method: "POST", path: check, auth: "pers", body: aiCheck("stories260K", "Once upon a time"), status: 429, busy: true},
		{name: "ai check unbillable", method: "POST", path: check, auth: "broken corp", body: aiCheck("stories260K", "Once upon a time"), status: 500, broken: true},
	}
}

// multipartUnread is why the contract takes a multipart upload the server
// refuses with 400: the validator does not read multipart bodies.
const multipartUnread = "libopenapi-validator does not read multipart bodies"

// aiCheck is the body of POST /ai/check.
func aiCheck(model, input string) string {
	b, _ := json.Marshal(map[string]string{"model": model, "input": input})
	return string(b)
}

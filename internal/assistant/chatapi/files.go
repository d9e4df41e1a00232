package chatapi

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strconv"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

// wireFile is a file as the API describes it (reference §3.9).
type wireFile struct {
	ID           string `json:"id"`
	Object       string `json:"object"`
	Bytes        int64  `json:"bytes"`
	CreatedAt    int64  `json:"created_at"`
	Filename     string `json:"filename"`
	Purpose      string `json:"purpose"`
	AccessPolicy string `json:"access_policy"`
}

func toWireFile(f assistant.File) wireFile {
	return wireFile{ID: f.ID, Object: "file", Bytes: f.Bytes, CreatedAt: f.CreatedAt.Unix(), Filename: f.Filename,
		Purpose: f.Purpose, AccessPolicy: "private"}
}

// uploadFile takes a multipart form with the file in part "file" and an
// optional "purpose" (the npm client's FormData). The platform's body cap
// for this path is the largest file plus the form's own bytes.
func (s *server) uploadFile(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		if web.IsBodyTooLarge(err) {
			platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
			return
		}
		writeError(w, http.StatusBadRequest, "body must be multipart/form-data with a part named file")
		return
	}
	defer r.MultipartForm.RemoveAll()
	part, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "file is required: a multipart part named file with a file name")
		return
	}
	defer part.Close()
	content, err := io.ReadAll(part)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	f, err := s.svc.UploadFile(r.Context(), principal(r), hdr.Filename, r.FormValue("purpose"), hdr.Header.Get("Content-Type"), content)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWireFile(f))
}

func (s *server) files(w http.ResponseWriter, r *http.Request) {
	fs, err := s.svc.Files(r.Context(), principal(r))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	out := struct {
		Data []wireFile `json:"data"`
	}{[]wireFile{}}
	for _, f := range fs {
		out.Data = append(out.Data, toWireFile(f))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) file(w http.ResponseWriter, r *http.Request) {
	f, err := s.svc.File(r.Context(), principal(r), r.PathValue("file"))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWireFile(f))
}

// fileContent answers the raw bytes with the type the file was stored
// with, whatever the Accept (the npm client asks for application/jpg).
func (s *server) fileContent(w http.ResponseWriter, r *http.Request) {
	f, b, err := s.svc.FileContent(r.Context(), principal(r), r.PathValue("file"))
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	// The type is the uploader's: a browser must neither sniff another
	// nor render the bytes in place.
	w.Header().Set("Content-Type", f.MediaType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Filename}))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// deleteFile is POST …/delete with an empty JSON object, as the provider
// has it, or no body.
func (s *server) deleteFile(w http.ResponseWriter, r *http.Request) {
	// A body that is not the empty object (or nothing) is a malformed
	// request: it is refused, and the file kept.
	if !s.readEmptyObject(w, r) {
		return
	}
	id := r.PathValue("file")
	if err := s.svc.DeleteFile(r.Context(), principal(r), id); err != nil {
		s.domainError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{id, "file", true})
}

// readEmptyObject reads a body that carries nothing but may be sent: none
// at all, or a JSON object (the provider's delete takes {}). Anything else
// is a malformed request, refused before the operation runs.
func (s *server) readEmptyObject(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if web.IsBodyTooLarge(err) {
			platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
		} else {
			writeError(w, http.StatusBadRequest, "could not read the body")
		}
		return false
	}
	// No body is JSON white space alone (RFC 8259 §2): bytes.TrimSpace
	// would also drop \v, \f and Unicode spaces, and so take a body of
	// them, which is neither nothing nor a JSON object, as none.
	if len(bytes.Trim(body, " \t\r\n")) == 0 {
		return true
	}
	var obj map[string]any
	if err := decodeJSON(bytes.NewReader(body), &obj); err != nil || obj == nil {
		writeError(w, http.StatusBadRequest, "the body must be empty or a JSON object")
		return false
	}
	return true
}

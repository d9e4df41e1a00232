package assistant

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"partnerapi/internal/jsonmsg"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// File is an uploaded file's description (reference §3.9); FileContent
// reads it with its bytes.
type File struct {
	ID        string
	ClientID  string
	Filename  string
	Purpose   string // general | assistant
	MediaType string
	Bytes     int64
	CreatedAt time.Time
	// HeaderClientID is the X-Client-ID the file was uploaded with, ""
	// for none: its download must then send the same (reference §2).
	HeaderClientID string
}

// Purposes an upload may name.
const (
	PurposeGeneral   = "general"
	PurposeAssistant = "assistant"
)

// DefaultMaxFileBytes bounds one upload. The provider does not publish its
// limit for the API; 40 MiB is what its chat interface takes for a
// document.
const DefaultMaxFileBytes = 40 << 20

// DefaultFileQuotaBytes bounds what one client's files take in all. The
// provider publishes no storage limit; without one, any client holding a
// token could fill the server's disk, 40 MiB at a time.
const DefaultFileQuotaBytes = 1 << 30

// ErrAttachmentContext is the provider's answer when attached text does
// not fit the model's context window (reference §4: 422, not the 413 of
// a long prompt).
var ErrAttachmentContext = &InvalidParams{422, "Unprocessable Entity for url: /api/v1/chat/completions: the attached files exceed the model's context window"}

// UploadFile stores a client's file. An empty purpose is general, as the
// npm client sends by default; the media type, when the client names none
// or only application/octet-stream, comes from the file name's extension.
func (s *Service) UploadFile(ctx context.Context, p Principal, filename, purpose, mediaType string, content []byte) (File, error) {
	if purpose == "" {
		purpose = PurposeGeneral
	}
	if purpose != PurposeGeneral && purpose != PurposeAssistant {
		return File{}, badRequest("purpose must be general or assistant")
	}
	name := path.Base(strings.ReplaceAll(filename, "\\", "/"))
	if filename == "" || name == "." || name == "/" {
		return File{}, badRequest("file is required: a multipart part named file with a file name")
	}
	// The name kept is stored in a text column and later quoted in chat
	// message content, so it must be UTF-8 text: PostgreSQL refuses a
	// TEXT value with invalid UTF-8 or a NUL byte, which made such an
	// upload a 500 after the fact. It is the client's malformed request,
	// refused before anything is stored. Only the base name is judged,
	// since the directories a client sends are dropped.
	if !storableText(name) {
		return File{}, badRequest("file name must be UTF-8 text without NUL characters")
	}
	// The X-Client-ID the file is bound to is stored beside it, for the
	// same reason held to the same rule: HTTP lets a header carry any
	// byte from 0x80 up, which PostgreSQL refused as well.
	if !storableText(p.HeaderClientID) {
		return File{}, badRequest("X-Client-ID must be UTF-8 text")
	}
	if len(content) == 0 {
		return File{}, badRequest("file is empty")
	}
	if int64(len(content)) > s.cfg.MaxFileBytes {
		return File{}, &InvalidParams{413, "Payload too large"}
	}
	quota := max(s.cfg.FileQuotaBytes, 0)
	if quota > 0 && int64(len(content)) > quota {
		return File{}, errFileQuota(quota)
	}
	// The type is served back with the bytes, so only a well-formed one
	// is kept, re-spelled by the mime package.
	t, params, err := mime.ParseMediaType(mediaType)
	if err == nil {
		mediaType = mime.FormatMediaType(t, params)
	}
	if err != nil || mediaType == "" || t == "application/octet-stream" {
		mediaType = "application/octet-stream"
		if t := mime.TypeByExtension(path.Ext(name)); t != "" {
			mediaType = t
		}
	}
	f := File{ID: newUUID(), ClientID: p.ClientID, Filename: name, Purpose: purpose, MediaType: mediaType,
		Bytes: int64(len(content)), CreatedAt: s.cfg.Now(), HeaderClientID: p.HeaderClientID}
	if err := s.store.SaveFile(ctx, f, content, quota); err != nil {
		if errors.Is(err, ErrFileQuota) {
			return File{}, errFileQuota(quota)
		}
		return File{}, err
	}
	return f, nil
}

// storableText reports whether s can be kept in a text column of either
// store: UTF-8 without NUL bytes, which PostgreSQL's TEXT refuses.
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// errFileQuota is the answer to an upload over the client's storage quota:
// the provider's 413 with a message that says which limit was met, so the
// client knows that deleting files (POST /files/{id}/delete) makes room.
func errFileQuota(quota int64) error {
	return &InvalidParams{413, fmt.Sprintf("Payload too large: the client's files would exceed its storage quota of %d bytes; delete files to make room", quota)}
}

// Files lists the client's files.
func (s *Service) Files(ctx context.Context, p Principal) ([]File, error) {
	return s.store.Files(ctx, p.ClientID)
}

// File describes one of the client's files.
func (s *Service) File(ctx context.Context, p Principal, id string) (File, error) {
	return s.store.File(ctx, p.ClientID, id)
}

// FileContent returns one of the client's files with its bytes, for its
// download. The provider binds the download of a file made under an
// X-Client-ID to requests that send the same (reference §2), so such a
// file is not found for any other request of the token's client, one
// without the header included; a file uploaded without one is not bound.
// Both ids are compared as NormalizeClientID spells them: the transport
// normalises the request's already, and a file stored before it did may
// hold a UUID in upper case.
func (s *Service) FileContent(ctx context.Context, p Principal, id string) (File, []byte, error) {
	f, b, err := s.store.FileContent(ctx, p.ClientID, id)
	if err == nil && f.HeaderClientID != "" && NormalizeClientID(f.HeaderClientID) != NormalizeClientID(p.HeaderClientID) {
		return File{}, nil, ErrNoSuchFile
	}
	return f, b, err
}

// NormalizeClientID is the X-Client-ID a file is bound to and compared by:
// a UUID in lower case, any other id as it was sent. Client ids are usually
// UUIDs, whose hex digits RFC 9562 §4 makes case-insensitive, and clients
// send them in either case (most libraries write lower case, Swift's
// UUID().uuidString and macOS's uuidgen upper), so the
// same end user's upload and download must not part over it. An id that
// is no UUID is the caller's own string, whose letter case may matter to
// it, so it stays exact.
func NormalizeClientID(id string) string {
	if IsUUID(id) {
		return strings.ToLower(id)
	}
	return id
}

// DeleteFile deletes one of the client's files.
func (s *Service) DeleteFile(ctx context.Context, p Principal, id string) error {
	return s.store.DeleteFile(ctx, p.ClientID, id)
}

// attach puts the text of each message's attached files into the message,
// after its own content, and reports whether any message had attachments.
// The models served here read text only, so an attachment that is not
// text (an image, a PDF) is refused with 422; an id that is not one of the
// client's files is a bad request.
func (s *Service) attach(ctx context.Context, p Principal, model string, msgs []Message) ([]Message, bool, error) {
	attached := false
	var out []Message
	for i, m := range msgs {
		if len(m.Attachments) == 0 {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		attached = true
		var b strings.Builder
		b.WriteString(m.Content)
		for _, id := range m.Attachments {
			// Reading an attachment is no download: the header binds
			// only GET /files/{id}/content.
			f, content, err := s.store.FileContent(ctx, p.ClientID, id)
			if errors.Is(err, ErrNoSuchFile) {
				return nil, false, badRequest("attachment " + jsonmsg.Echo(id) + " is not a file of this client")
			} else if err != nil {
				return nil, false, err
			}
			if !isText(f.MediaType, content) {
				return nil, false, invalid("model " + jsonmsg.Echo(model) + " reads text only; attachment " + jsonmsg.Echo(f.Filename) + " is " + jsonmsg.Echo(f.MediaType))
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(f.Filename)
			b.WriteString(":\n")
			b.Write(content)
		}
		out[i].Content, out[i].Attachments = b.String(), nil
	}
	if out == nil {
		return msgs, false, nil
	}
	return out, attached, nil
}

// isText reports whether a file can be read as text: a text/* type or a
// structured-text application type, in UTF-8 without NUL bytes.
func isText(mediaType string, content []byte) bool {
	t, _, _ := mime.ParseMediaType(mediaType)
	switch {
	case strings.HasPrefix(t, "text/"), t == "application/json", t == "application/xml", t == "application/x-yaml",
		t == "application/yaml", t == "application/csv", t == "application/x-ndjson", t == "application/octet-stream":
	default:
		return false
	}
	return utf8.Valid(content) && !strings.ContainsRune(string(content), 0)
}

package assistant_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/storetest"
)

// promptEngine records the messages it is asked to continue and refuses a
// prompt longer than window bytes, as a model's context window would.
type promptEngine struct {
	window int
	seen   []assistant.Message
}

func (e *promptEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "m", Version: "1.0", Type: assistant.TypeChat, ContextWindow: e.window}}, nil
}

func (e *promptEngine) CountTokens(_ context.Context, _ string, text string) (int, error) {
	return len(text), nil
}

func (e *promptEngine) Generate(_ context.Context, req assistant.GenerateRequest, _ func(assistant.Delta) error) (assistant.Result, error) {
	e.seen = req.Messages
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	if n > e.window {
		return assistant.Result{}, assistant.ErrContextWindow
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: "ok", FinishReason: "stop"}}}, nil
}

// fileWorld is a service on SQLite with two postpaid clients.
func fileWorld(t *testing.T, cfg assistant.Config) (*assistant.Service, *promptEngine, assistant.Principal, assistant.Principal) {
	t.Helper()
	db := storetest.SQLite(t)
	if err := assistantsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	eng := &promptEngine{window: 200}
	s := assistant.NewService(assistantsql.New(db), eng, cfg)
	var ps []assistant.Principal
	for range 2 {
		c, err := s.CreateClient(context.Background(), assistant.ScopeCorp, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopeCorp})
	}
	return s, eng, ps[0], ps[1]
}

func TestUploadFileChecks(t *testing.T) {
	ctx := context.Background()
	s, _, me, _ := fileWorld(t, assistant.Config{MaxFileBytes: 16})
	for _, tc := range []struct {
		name, filename, purpose, mediaType, content string
		status                                      int // 0: stored
		wantType                                    string
	}{
		{"text", "a.txt", "", "text/plain", "hello", 0, "text/plain"},
		{"type from the extension", "dir/b.json", "assistant", "application/octet-stream", "{}", 0, "application/json"},
		{"malformed type", "c.txt", "general", "text/plain; charset", "x", 0, "text/plain; charset=utf-8"},
		{"type re-spelled", "d.txt", "general", "Text/Plain;Charset=UTF-8", "x", 0, "text/plain; charset=UTF-8"},
		{"unknown purpose", "a.txt", "secret", "text/plain", "x", 400, ""},
		{"no file name", "", "general", "text/plain", "x", 400, ""},
		{"empty", "a.txt", "general", "text/plain", "", 400, ""},
		{"over the limit", "a.txt", "general", "text/plain", strings.Repeat("x", 17), 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.UploadFile(ctx, me, tc.filename, tc.purpose, tc.mediaType, []byte(tc.content))
			var inv *assistant.InvalidParams
			switch {
			case tc.status != 0 && (!errors.As(err, &inv) || inv.Status != tc.status):
				t.Fatalf("err %v, want status %d", err, tc.status)
			case tc.status == 0 && err != nil:
				t.Fatal(err)
			case tc.status == 0 && (f.MediaType != tc.wantType || f.Bytes != int64(len(tc.content)) || strings.Contains(f.Filename, "/")):
				t.Fatalf("stored %+v", f)
			}
		})
	}
}

// TestNormalizeClientID: a UUID is one id in either letter case, any other
// X-Client-ID is the caller's exact string.
func TestNormalizeClientID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f", "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f"},
		{"6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6F", "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f"},
		{"6f9C1e2A-3b4D-4c5E-8f70-1A2b3C4d5E6f", "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f"},
		{"END-USER-1", "END-USER-1"},
		{"{6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6F}", "{6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6F}"},
		{"6F9C1E2A3B4D4C5E8F701A2B3C4D5E6F", "6F9C1E2A3B4D4C5E8F701A2B3C4D5E6F"},
		{"6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6G", "6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6G"},
	} {
		if got := assistant.NormalizeClientID(tc.in); got != tc.want {
			t.Errorf("NormalizeClientID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFileContentClientID: the download of a file bound to an X-Client-ID
// compares the ids as NormalizeClientID spells them, so a UUID matches in
// any letter case, the stored one too (a file uploaded before the
// transport normalised it), while any other id must match exactly.
func TestFileContentClientID(t *testing.T) {
	ctx := context.Background()
	s, _, me, _ := fileWorld(t, assistant.Config{})
	const lower, upper = "6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f", "6F9C1E2A-3B4D-4C5E-8F70-1A2B3C4D5E6F"
	for _, tc := range []struct {
		name, stored, sent string
		found              bool
	}{
		{"UUID, same case", lower, lower, true},
		{"UUID stored in upper case, sent in lower", upper, lower, true},
		{"UUID stored in lower case, sent in upper", lower, upper, true},
		{"UUID, another one", lower, "00000000-0000-4000-8000-000000000000", false},
		{"UUID, none sent", upper, "", false},
		{"other id, same case", "end-user-1", "end-user-1", true},
		{"other id, another case", "end-user-1", "END-USER-1", false},
		{"unbound", "", upper, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := me
			up.HeaderClientID = tc.stored
			f, err := s.UploadFile(ctx, up, "a.txt", "general", "text/plain", []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			down := me
			down.HeaderClientID = tc.sent
			_, content, err := s.FileContent(ctx, down, f.ID)
			switch {
			case tc.found && (err != nil || string(content) != "x"):
				t.Fatalf("%q, %v; want the file", content, err)
			case !tc.found && !errors.Is(err, assistant.ErrNoSuchFile):
				t.Fatalf("err %v, want ErrNoSuchFile", err)
			}
		})
	}
}

// The storage quota is checked before the store for a file larger than the
// whole quota and by the store for the room left; both answers are the
// provider's 413 naming the quota, and a refused file is not listed.
func TestUploadFileQuota(t *testing.T) {
	ctx := context.Background()
	s, _, me, _ := fileWorld(t, assistant.Config{FileQuotaBytes: 10})
	for _, tc := range []struct {
		name   string
		n      int
		status int
	}{
		{"larger than the quota", 11, 413},
		{"fits", 8, 0},
		{"over the room left", 3, 413},
		{"the room left", 2, 0},
	} {
		_, err := s.UploadFile(ctx, me, "a.txt", "general", "text/plain", []byte(strings.Repeat("x", tc.n)))
		var inv *assistant.InvalidParams
		switch {
		case tc.status == 0 && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.status != 0 && (!errors.As(err, &inv) || inv.Status != tc.status || !strings.Contains(inv.Message, "quota of 10 bytes")):
			t.Fatalf("%s: %v, want %d naming the quota", tc.name, err, tc.status)
		}
	}
	if files, err := s.Files(ctx, me); err != nil || len(files) != 2 {
		t.Fatalf("files %v, %v; want the two that fit", files, err)
	}
	// A negative quota is no limit.
	s, _, me, _ = fileWorld(t, assistant.Config{FileQuotaBytes: -1, MaxFileBytes: 1 << 20})
	for range 3 {
		if _, err := s.UploadFile(ctx, me, "a.txt", "general", "text/plain", make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
	}
}

// An attached text file reaches the engine inside its message, after the
// message's own text; what cannot be attached is refused before the engine
// runs, and attached text over the context window is the provider's 422.
func TestChatAttachments(t *testing.T) {
	ctx := context.Background()
	s, eng, me, other := fileWorld(t, assistant.Config{})
	up := func(p assistant.Principal, name, mediaType, content string) string {
		t.Helper()
		f, err := s.UploadFile(ctx, p, name, "general", mediaType, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	notes := up(me, "notes.txt", "text/plain", "The dragon is Blue.")
	image := up(me, "pic.png", "image/png", "\x89PNG\r\n")
	binary := up(me, "data.bin", "application/octet-stream", "a\x00b")
	long := up(me, "long.txt", "text/plain", strings.Repeat("word ", 60))
	theirs := up(other, "theirs.txt", "text/plain", "secret")
	chat := func(ids ...string) error {
		c, err := s.PrepareChat(ctx, me, assistant.ChatRequest{Model: "m",
			Messages: []assistant.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Who?", Attachments: ids}}})
		if err != nil {
			return err
		}
		_, err = s.Run(ctx, c, nil)
		return err
	}
	if err := chat(notes); err != nil {
		t.Fatal(err)
	}
	if got := eng.seen[1]; got.Content != "Who?\n\nnotes.txt:\nThe dragon is Blue." || got.Attachments != nil || eng.seen[0].Content != "Be brief." {
		t.Fatalf("the engine saw %+v", eng.seen)
	}
	for _, tc := range []struct {
		name   string
		ids    []string
		status int
	}{
		{"image", []string{image}, 422},
		{"binary under a generic type", []string{binary}, 422},
		{"another client's file", []string{theirs}, 400},
		{"unknown id", []string{"nope"}, 400},
		{"over the context window", []string{notes, long}, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng.seen = nil
			err := chat(tc.ids...)
			var inv *assistant.InvalidParams
			if !errors.As(err, &inv) || inv.Status != tc.status {
				t.Fatalf("err %v, want status %d", err, tc.status)
			}
			if tc.status != 422 || tc.name != "over the context window" {
				if eng.seen != nil {
					t.Fatal("the engine ran a refused chat")
				}
			}
		})
	}
}

package modelstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strings"
)

// defaultTag is the quantisation picked for hf.co/OWNER/REPO when the
// repository holds several GGUF files (Ollama picks the same).
const defaultTag = "Q4_K_M"

// resolveHub fills in the URL and name of a Hugging Face source that names
// a repository (and maybe a quantisation tag) but no file, from the Hub's
// model info (GET /api/models/OWNER/REPO, its "siblings" list of files).
func resolveHub(ctx context.Context, client *http.Client, src Source, token string) (Source, error) {
	owner, repo, _ := strings.Cut(src.Repo, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hubURL(src.endpoint, "api", "models", owner, repo), nil)
	if err != nil {
		return Source{}, err
	}
	req.Header.Set("User-Agent", "partnerapi-models-pull")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Source{}, fmt.Errorf("listing the files of %s: %w", src.Repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := statusError(resp, src)
		if pe, ok := err.(permanentError); ok {
			return Source{}, pe.err
		}
		return Source{}, fmt.Errorf("listing the files of %s: %w", src.Repo, err)
	}
	var info struct {
		Siblings []struct {
			RFilename string `json:"rfilename"`
		} `json:"siblings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&info); err != nil {
		return Source{}, fmt.Errorf("listing the files of %s: %w", src.Repo, err)
	}
	var ggufs []string
	for _, s := range info.Siblings {
		f := s.RFilename
		// mmproj files are vision projectors, not language models.
		if strings.HasSuffix(strings.ToLower(f), ".gguf") && !strings.Contains(strings.ToLower(path.Base(f)), "mmproj") {
			ggufs = append(ggufs, f)
		}
	}
	sort.Strings(ggufs)
	file, err := pickFile(src, ggufs)
	if err != nil {
		return Source{}, err
	}
	segs := strings.Split(file, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return Source{}, fmt.Errorf("%w: the Hub lists a file with a bad path %q", ErrSource, file)
		}
	}
	src.URL = hubURL(src.endpoint, append([]string{owner, repo, "resolve", "main"}, segs...)...)
	src.Name, src.NameErr = nameFromFile(path.Base(file))
	return src, nil
}

// pickFile chooses the file for src.Tag (the default tag, or the only GGUF,
// when there is none) among the repository's GGUF files.
func pickFile(src Source, ggufs []string) (string, error) {
	if len(ggufs) == 0 {
		return "", fmt.Errorf("%w: %s holds no GGUF file", ErrSource, src.Repo)
	}
	tag := src.Tag
	if tag == "" {
		if len(ggufs) == 1 {
			return ggufs[0], nil
		}
		tag = defaultTag
	}
	var matches []string
	for _, f := range ggufs {
		if hasTag(strings.TrimSuffix(path.Base(f), path.Ext(f)), tag) {
			matches = append(matches, f)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) == 0:
		return "", fmt.Errorf("%w: no GGUF file in %s has the tag %s; it holds %s (pull one with hf.co/%s:FILE.gguf)",
			ErrSource, src.Repo, tag, listFiles(ggufs), src.Repo)
	case strings.Contains(matches[0], "-of-"):
		return "", fmt.Errorf("%w: %s %s is split into %d files (%s), which pull does not join; pick a single-file quantisation",
			ErrSource, src.Repo, tag, len(matches), listFiles(matches))
	}
	return "", fmt.Errorf("%w: several files in %s have the tag %s: %s; name one with hf.co/%s:FILE.gguf",
		ErrSource, src.Repo, tag, listFiles(matches), src.Repo)
}

// hasTag reports whether tag occurs in name as a whole word: Q4_K does not
// match "model-Q4_K_M", Q4_K_M matches "model.Q4_K_M" in any case.
func hasTag(name, tag string) bool {
	name, tag = strings.ToUpper(name), strings.ToUpper(tag)
	word := func(c byte) bool { return c == '_' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' }
	for i := 0; ; {
		j := strings.Index(name[i:], tag)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(tag)
		if (start == 0 || !word(name[start-1])) && (end == len(name) || !word(name[end])) {
			return true
		}
		i = start + 1
	}
}

func listFiles(files []string) string {
	if len(files) > 12 {
		return strings.Join(files[:12], ", ") + fmt.Sprintf(" and %d more", len(files)-12)
	}
	return strings.Join(files, ", ")
}

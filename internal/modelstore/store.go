package modelstore

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"partnerapi/internal/dirsync"
	"partnerapi/internal/filelock"
	"partnerapi/internal/inference/gguf"
)

// Store is one models directory: NAME.gguf files (what the assistant serves),
// their NAME.gguf.sha256 sidecars (sha256sum format, written by pull) and a
// .partial/ directory of resumable downloads and per-name lock files.
type Store struct {
	Dir string
}

// partialDir holds NAME.gguf.part, NAME.gguf.part.json and, while a pull or
// rm of NAME runs, NAME.lock. It is inside the models directory so the
// final rename never crosses a file system, and hidden so the engine (which
// reads *.gguf) never sees it.
const partialDir = ".partial"

// ErrBusy is returned when another pull or rm holds the name's lock.
var ErrBusy = errors.New("busy")

// ErrNotFound is returned by Remove for a name with nothing to remove.
var ErrNotFound = errors.New("no such model")

func (s *Store) modelPath(name string) string   { return filepath.Join(s.Dir, name+".gguf") }
func (s *Store) sidecarPath(name string) string { return filepath.Join(s.Dir, name+".gguf.sha256") }
func (s *Store) partPath(name string) string {
	return filepath.Join(s.Dir, partialDir, name+".gguf.part")
}
func (s *Store) metaPath(name string) string { return s.partPath(name) + ".json" }
func (s *Store) lockPath(name string) string { return filepath.Join(s.Dir, partialDir, name+".lock") }

// lock takes the exclusive per-name lock that keeps two pulls (or a pull and
// an rm) of one name from writing the same part file. It is an flock, so a
// killed process never leaves a stale lock behind.
//
// unlock deletes the lock file before it gives the lock back, so that a
// finished pull or rm leaves no empty NAME.lock in .partial/ (nor an empty
// .partial/). Deleting a lock file opens a race that lock closes: a process
// that opened the file before it was deleted may then take the lock on the
// deleted file while a third creates and locks a new one, and both would go
// ahead. So a lock counts only if the path still names the very file locked
// (os.SameFile); when it does not, the file was deleted by a holder that has
// finished, and lock tries once more. Where an open file cannot be deleted (Windows) the
// lock file stays, as it always did there, and the check always holds.
func (s *Store) lock(name string) (unlock func(), err error) {
	for attempt := 0; ; attempt++ {
		unlock, stale, err := s.tryLock(name)
		if !stale || attempt == 10 {
			return unlock, err
		}
	}
}

// tryLock is one attempt of lock; stale reports that the file it locked had
// already been deleted or replaced, so that lock should try again.
func (s *Store) tryLock(name string) (unlock func(), stale bool, err error) {
	if err := os.MkdirAll(filepath.Join(s.Dir, partialDir), 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another holder's unlock removed .partial/ between a third
			// one making it and MkdirAll checking it (unlock removes it
			// once empty): try again.
			return nil, true, fmt.Errorf("%w: the directory of the lock of %q keeps being removed", ErrBusy, name)
		}
		return nil, false, fmt.Errorf("models directory: %w", err)
	}
	path := s.lockPath(name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		// Another holder's unlock removed .partial/ between MkdirAll and
		// here: it was empty then, so try again from MkdirAll.
		return nil, true, fmt.Errorf("%w: the directory of the lock %s of %q keeps being removed", ErrBusy, path, name)
	}
	if err != nil {
		return nil, false, err
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, false, fmt.Errorf("%w: another pull or rm of %q is running (lock %s)", ErrBusy, name, path)
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	held, err := f.Stat()
	if err != nil {
		_ = filelock.Unlock(f)
		f.Close()
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(held, now) {
		_ = filelock.Unlock(f)
		f.Close()
		return nil, true, fmt.Errorf("%w: the lock %s of %q keeps being replaced", ErrBusy, path, name)
	}
	return func() {
		// Deleted while still held: whoever opened it meanwhile finds, once
		// it has the lock, that the path no longer names it.
		_ = os.Remove(path)
		_ = filelock.Unlock(f)
		f.Close()
		// .partial/ goes too once nothing is in it (no other lock, no
		// resumable download), so a models directory holds only models
		// between pulls; removing a directory that is not empty fails
		// and changes nothing.
		_ = os.Remove(filepath.Dir(path))
	}, false, nil
}

// Info is what a GGUF header says about a model.
type Info struct {
	Arch          string // general.architecture
	Quant         string // general.file_type's name, else the tensor type holding most bytes
	ContextLength uint64 // {arch}.context_length (0: not stated)
	Tensors       int    // 0 for tokenizer-only files, which the engine does not serve
}

// Inspect parses the GGUF file at path (header and tensor table; the
// tensor data is mapped, not read) and summarises it. An error means the
// file is not a GGUF model the engine could open.
func Inspect(path string) (Info, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	var info Info
	info.Arch, _ = f.String("general.architecture")
	info.Tensors = len(f.Tensors)
	if info.Arch != "" {
		info.ContextLength, _ = f.Uint(info.Arch + ".context_length")
	}
	if ft, ok := f.Uint("general.file_type"); ok {
		info.Quant = fileTypeName(ft)
	} else {
		info.Quant = dominantTensorType(f)
	}
	return info, nil
}

// fileTypes names llama.cpp's llama_ftype values (general.file_type); the
// gaps are values llama.cpp has retired.
var fileTypes = map[uint64]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
	11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M",
	18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S",
	25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M",
	32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4",
}

func fileTypeName(ft uint64) string {
	if n, ok := fileTypes[ft]; ok {
		return n
	}
	return fmt.Sprintf("file_type=%d", ft)
}

// dominantTensorType names the tensor type holding the most bytes, which is
// what a file without general.file_type (stories260K) is quantised as.
func dominantTensorType(f *gguf.File) string {
	bytes := map[gguf.GGMLType]uint64{}
	for _, t := range f.Tensors {
		bytes[t.Type] += t.Size()
	}
	best, bestN := "", uint64(0)
	for typ, n := range bytes {
		if n > bestN || (n == bestN && typ.String() < best) {
			best, bestN = typ.String(), n
		}
	}
	return best
}

// Model is one NAME.gguf in the directory.
type Model struct {
	Name   string
	Path   string
	Size   int64
	SHA256 string // from the sidecar pull wrote; "" when unknown
	Info   Info
	Err    error // the file does not parse as GGUF
}

// Partial is an interrupted download that the same pull resumes.
type Partial struct {
	Name string
	Size int64 // bytes downloaded so far
	URL  string
}

// List returns the models of the directory sorted by name, and the
// interrupted downloads. A missing directory has no models.
func (s *Store) List() ([]Model, []Partial, error) {
	paths, err := filepath.Glob(filepath.Join(s.Dir, "*.gguf"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	var models []Model
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".gguf")
		fi, err := os.Stat(p) // follows symlinks: models are often linked, not copied
		if err != nil {
			models = append(models, Model{Name: name, Path: p, Err: err})
			continue
		}
		if fi.IsDir() {
			continue
		}
		m := Model{Name: name, Path: p, Size: fi.Size(), SHA256: s.knownSHA256(name)}
		m.Info, m.Err = Inspect(p)
		models = append(models, m)
	}
	parts, err := filepath.Glob(filepath.Join(s.Dir, partialDir, "*.gguf.part"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(parts)
	var partials []Partial
	for _, p := range parts {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(p), ".gguf.part")
		meta, _ := s.readMeta(name)
		partials = append(partials, Partial{Name: name, Size: fi.Size(), URL: meta.URL})
	}
	return models, partials, nil
}

// knownSHA256 reads NAME.gguf.sha256; "" when absent or malformed.
func (s *Store) knownSHA256(name string) string {
	f, err := os.Open(s.sidecarPath(name))
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	sum, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	if !isSHA256(sum) {
		return ""
	}
	return sum
}

// Remove deletes NAME.gguf, its sidecar and any partial download of it. A
// NAME.json manifest is kept: it is configuration the operator wrote, and it
// applies again if the model is pulled back. It returns the removed paths.
func (s *Store) Remove(name string) ([]string, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.Dir); err != nil {
		return nil, fmt.Errorf("%w %q: models directory: %v", ErrNotFound, name, err)
	}
	unlock, err := s.lock(name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var removed []string
	for _, p := range []string{s.modelPath(name), s.sidecarPath(name), s.partPath(name), s.metaPath(name)} {
		err := os.Remove(p)
		switch {
		case err == nil:
			removed = append(removed, p)
		case !errors.Is(err, fs.ErrNotExist):
			return removed, err
		}
	}
	if len(removed) == 0 {
		return nil, fmt.Errorf("%w %q in %s", ErrNotFound, name, s.Dir)
	}
	return removed, dirsync.Sync(s.Dir)
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

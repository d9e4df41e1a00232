package gguf

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// mapping is one read-only memory mapping of a file, shared by every File
// opened on the same inode, so that loading a model twice in one process
// does not map (or page in) its weights twice.
type mapping struct {
	key    mappingKey
	data   []byte
	parsed *File
	refs   int
}

// mappingKey identifies a file's contents: the same inode with the same size
// and modification time is taken to be the same bytes.
type mappingKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

var mappings = struct {
	sync.Mutex
	m map[mappingKey]*mapping
}{m: map[mappingKey]*mapping{}}

// Open memory-maps the file at path read-only and parses it (on systems
// without mmap it reads the file into memory: mmap_other.go). Files already
// open in this process (same inode, size and mtime) share one mapping; it is
// unmapped when the last File on it is closed.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file", path)
	}
	key := mappingKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	key.dev, key.ino = fileID(fi)

	mappings.Lock()
	defer mappings.Unlock()
	if m, ok := mappings.m[key]; ok && key.ino != 0 {
		m.refs++
		return m.parsed.handle(m), nil
	}
	if fi.Size() < 4 {
		return nil, fmt.Errorf("%w: %s is too short (%d bytes)", ErrFormat, path, fi.Size())
	}
	if int64(int(fi.Size())) != fi.Size() {
		return nil, fmt.Errorf("gguf: %s is too large to map", path)
	}
	data, err := mapFile(fh, int(fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	parsed, err := Parse(data)
	if err != nil {
		_ = unmapFile(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &mapping{key: key, data: data, parsed: parsed, refs: 1}
	if key.ino != 0 {
		mappings.m[key] = m
	}
	return parsed.handle(m), nil
}

// handle returns a File sharing f's parsed contents, tied to mapping m.
func (f *File) handle(m *mapping) *File {
	h := *f
	h.mapping = m
	return &h
}

// Close releases the file. Slices returned by TensorData become invalid once
// the last File on the same mapping is closed. Closing twice is an error.
func (f *File) Close() error {
	if f.mapping == nil {
		if f.data == nil {
			return errors.New("gguf: file already closed")
		}
		f.data = nil
		return nil
	}
	mappings.Lock()
	defer mappings.Unlock()
	m := f.mapping
	f.mapping, f.data = nil, nil
	m.refs--
	if m.refs > 0 {
		return nil
	}
	if mappings.m[m.key] == m {
		delete(mappings.m, m.key)
	}
	return unmapFile(m.data)
}

// Maps reports whether b lies within the file's mapping.
func (f *File) Maps(b []byte) bool {
	_, ok := f.mappedOffset(b)
	return ok
}

// mappedOffset is where b starts in the file's mapping, if b lies within
// it (not for an empty b or a File parsed from memory).
func (f *File) mappedOffset(b []byte) (uintptr, bool) {
	if f.mapping == nil || len(b) == 0 {
		return 0, false
	}
	data := f.mapping.data
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if start < base || start+uintptr(len(b)) > base+uintptr(len(data)) {
		return 0, false
	}
	return start - base, true
}

// DropResident tells the kernel that this process no longer needs the
// pages of b resident: b must lie in f's mapped tensor data. It is for
// weights that the process has copied elsewhere (the AVX-512 kernels'
// repacked matrices): without it both copies would count in the process's
// resident memory. The mapping stays valid; a later read of b faults its
// pages back in from the page cache or the file. Only whole pages inside b
// are dropped, and nothing happens where f is not a file mapping (a File
// parsed from memory owns its bytes, which madvise would zero).
func (f *File) DropResident(b []byte) error {
	if f.mapping == nil || len(b) == 0 {
		return nil
	}
	off, ok := f.mappedOffset(b)
	if !ok {
		return errors.New("gguf: DropResident: bytes outside the file's mapping")
	}
	page := uintptr(os.Getpagesize())
	lo := (off + page - 1) &^ (page - 1)
	hi := (off + uintptr(len(b))) &^ (page - 1)
	if lo >= hi {
		return nil
	}
	return dropPages(f.mapping.data[lo:hi])
}

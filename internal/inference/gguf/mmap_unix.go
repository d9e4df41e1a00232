//go:build unix

package gguf

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only and shared, so that the weights
// stay in the page cache, are paged in on first use and are shared with
// every other process that maps the same file.
func mapFile(f *os.File, size int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(data []byte) error { return unix.Munmap(data) }

// dropPages tells the kernel that the process no longer needs the whole
// pages of b resident; a later read faults them back in from the file.
func dropPages(b []byte) error { return unix.Madvise(b, unix.MADV_DONTNEED) }

// fileID is the device and inode of the file fi describes, or zeros where
// the system does not say.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

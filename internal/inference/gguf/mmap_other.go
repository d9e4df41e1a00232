//go:build !unix

package gguf

import (
	"io"
	"io/fs"
	"os"
)

// mapFile reads the whole file into memory: this system has no mmap that
// package syscall offers, and a model read once is still correct, only
// slower to open and not shared between processes.
func mapFile(f *os.File, size int) ([]byte, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

func unmapFile([]byte) error { return nil }

// dropPages does nothing: the bytes are the process's own memory, which
// the repacked copy does not replace.
func dropPages([]byte) error { return nil }

// fileID reports no identity, so each Open of a file gets its own copy.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

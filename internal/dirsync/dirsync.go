// Package dirsync makes a directory's entries durable: a file made,
// renamed or removed in it survives a power cut only once the directory
// itself is synced, which syncing the file does not do.
package dirsync

import (
	"errors"
	"os"
)

// Sync syncs dir, where the system can sync a directory. Windows cannot
// (it answers ErrInvalid or ErrUnsupported), and its renames need no such
// step, so there Sync does nothing.
func Sync(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

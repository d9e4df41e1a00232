package modelstore

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// freeBytes is the space the caller may still use on the volume holding
// path.
func freeBytes(path string) (uint64, bool) {
	p, err := windows.UTF16PtrFromString(filepath.Dir(path))
	if err != nil {
		return 0, false
	}
	var free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, nil, nil); err != nil {
		return 0, false
	}
	return free, true
}

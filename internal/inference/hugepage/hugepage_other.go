//go:build !linux

package hugepage

const available = false

func advise([]byte) {}

package hugepage

import "golang.org/x/sys/unix"

const available = true

// advise asks for huge pages on b. Fresh heap memory is not yet faulted
// in, so MADV_HUGEPAGE alone makes its first touches fault in huge pages;
// reused heap memory the runtime has zeroed is already present, and
// MADV_COLLAPSE (Linux 6.1+) turns it into huge pages at once (older
// kernels leave that to khugepaged). Errors are ignored: without the
// advice the memory is still correct, only slower.
func advise(b []byte) {
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(b, unix.MADV_COLLAPSE)
}

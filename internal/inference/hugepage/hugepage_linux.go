package hugepage

import "syscall"

const available = true

// Linux madvise advice values (include/uapi/asm-generic/mman-common.h),
// which the syscall package does not name.
const (
	madvHugepage = 14 // MADV_HUGEPAGE: back the range with huge pages
	madvCollapse = 25 // MADV_COLLAPSE (Linux 6.1+): do it now for pages already present
)

// advise asks for huge pages on b. Fresh heap memory is not yet faulted
// in, so MADV_HUGEPAGE alone makes its first touches fault in huge pages;
// reused heap memory the runtime has zeroed is already present, and
// MADV_COLLAPSE turns it into huge pages at once (older kernels leave that
// to khugepaged). Errors are ignored: without the advice the memory is
// still correct, only slower.
func advise(b []byte) {
	_ = syscall.Madvise(b, madvHugepage)
	_ = syscall.Madvise(b, madvCollapse)
}

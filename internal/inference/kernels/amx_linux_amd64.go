//go:build !purego

package kernels

import "syscall"

// requestAMX asks Linux for the AMX tile data state (XTILEDATA, state
// component 18) for this process: since Linux 5.16 a process must request
// it with arch_prctl(ARCH_REQ_XCOMP_PERM) before its first tile
// instruction, which otherwise faults. The request fails where the kernel
// or the hypervisor does not expose AMX, and the kernels then stay on
// VNNI. Go's signal stacks (32 KiB) hold the larger signal frame that the
// tile state adds (about 11 KiB).
func requestAMX() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}

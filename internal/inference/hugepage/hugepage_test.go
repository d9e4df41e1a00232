package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestMakeAligned checks Make's contract: zeroed, the requested length,
// large slices on a huge-page boundary, small ones and disabled ones plain.
func TestMakeAligned(t *testing.T) {
	for _, c := range []struct {
		n       int
		aligned bool
	}{{100, false}, {Size - 1, false}, {Size, available}, {5*Size + 123, available}} {
		b := Make[byte](c.n)
		if len(b) != c.n || cap(b) != c.n {
			t.Fatalf("Make(%d): len %d cap %d", c.n, len(b), cap(b))
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %d, want zeroed memory", c.n, i, v)
			}
		}
		if c.aligned && uintptr(unsafe.Pointer(&b[0]))%Size != 0 {
			t.Errorf("Make(%d) at %p: not on a %d-byte boundary", c.n, &b[0], Size)
		}
	}
	f := Make[float32](Size)
	if len(f) != Size || uintptr(unsafe.Pointer(&f[0]))%4 != 0 {
		t.Fatalf("Make[float32]: len %d at %p", len(f), &f[0])
	}
	SetEnabled(false)
	defer SetEnabled(true)
	if b := Make[byte](4 * Size); len(b) != 4*Size {
		t.Fatalf("disabled Make: len %d", len(b))
	}
}

// TestMakeGetsHugePages checks, where the kernel offers transparent huge
// pages, that a large slice is backed by them once touched: its range in
// /proc/self/smaps counts AnonHugePages.
func TestMakeGetsHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("no transparent huge pages here (%q, %v)", strings.TrimSpace(string(mode)), err)
	}
	failed0 := thpFailures()
	b := Make[byte](8 * Size)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	kb, err := anonHugeKB(uintptr(unsafe.Pointer(&b[0])))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("THP %q: %d kB of the slice's mapping in huge pages", strings.TrimSpace(string(mode)), kb)
	if kb < 2*Size/1024 {
		if thpFailures() > failed0 {
			// The kernel tried and had no free huge page (fragmented or
			// short memory): the advice worked, the machine could not.
			t.Skipf("the kernel had no huge pages to give (/proc/vmstat fallbacks rose); %d kB", kb)
		}
		t.Errorf("the 16 MB slice's mapping has %d kB in huge pages, want at least 4096", kb)
	}
}

// thpFailures sums /proc/vmstat's counts of huge-page faults and collapses
// that fell back to small pages for want of a huge one (0 if unreadable).
func thpFailures() int {
	data, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && (f[0] == "thp_fault_fallback" || f[0] == "thp_collapse_alloc_failed") {
			v, _ := strconv.Atoi(f[1])
			n += v
		}
	}
	return n
}

// anonHugeKB returns the AnonHugePages of the mapping holding address a.
func anonHugeKB(a uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = a >= lo && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return 0, fmt.Errorf("no mapping holds %#x", a)
}

// mappingRange parses the "lo-hi perms ..." header line of a mapping.
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	l, h, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(l, 16, 64)
	b, err2 := strconv.ParseUint(h, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}

//go:build !purego

package kernels

import (
	"debug/elf"
	"debug/gosym"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// avx512Marks are what makes a TEXT block an AVX-512 kernel: a zmm or mask
// register, one of the sixteen registers only EVEX can name, or a VNNI
// instruction (the Go assembler encodes VPDPBUSD/VPDPWSSD as EVEX only).
var avx512Marks = regexp.MustCompile(`\bZ\d+\b|\bK[1-7]\b|\b[XY](1[6-9]|2\d|3[01])\b|\bVPDP(BUSD|WSSD)S?\b`)

// TestAVX2KernelsAreVEXOnly reads this test binary's line table and fails
// when an instruction of an assembly function that names no AVX-512 register
// or instruction was encoded with an EVEX prefix (first byte 0x62). The Go
// assembler silently picks EVEX for forms only AVX-512 has (a shift by an
// immediate with a memory source, for one), and such a kernel dies with SIGILL
// on an AVX2-only CPU while every test passes on the AVX-512 machine it was
// written on: that happened to the packed K-quant kernels of 2026-11-27, found
// the next day on a Zen 3. (go tool objdump cannot be used: its decoder does
// not know VEX and loses the instruction boundaries.)
func TestAVX2KernelsAreVEXOnly(t *testing.T) {
	exe, err := elf.Open(os.Args[0])
	if err != nil {
		t.Skipf("SKIPPING: cannot read the test binary as ELF: %v", err)
	}
	defer exe.Close()
	text, pcln := exe.Section(".text"), exe.Section(".gopclntab")
	if text == nil || pcln == nil {
		t.Skip("SKIPPING: the test binary has no .text or .gopclntab")
	}
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(tab, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	marks := avx512LinesOfSources(t)
	sources := make(map[string][]string)
	for name := range marks {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sources[name] = strings.Split(string(src), "\n")
	}
	// Walk every assembly function of the package once, byte by byte: an
	// instruction starts where the line changes (one instruction per line
	// in these files), and the line table is exact where a decoder is not.
	checked, bad := 0, 0
	for _, fn := range table.Funcs {
		if !strings.HasPrefix(fn.Name, "partnerapi/internal/inference/kernels.") {
			continue
		}
		file, first, _ := table.PCToLine(fn.Entry)
		name := filepath.Base(file)
		marked, ok := marks[name]
		if !ok || filepath.Dir(file) != dir || marked[first] {
			// Marks cover whole TEXT blocks, so a function whose first
			// line is marked is AVX-512 throughout: skipping it here spares
			// a line-table lookup per byte of the largest kernels.
			continue
		}
		last := -1
		for pc := fn.Entry; pc < fn.End; pc++ {
			_, n, _ := table.PCToLine(pc)
			if n == last {
				continue
			}
			last = n
			if marked[n] || sources[name] == nil || n > len(sources[name]) {
				continue
			}
			checked++
			if code[pc-text.Addr] == 0x62 {
				bad++
				if bad <= 10 {
					t.Errorf("%s:%d (%s) is EVEX-encoded in a function without AVX-512 registers: it faults on AVX2-only CPUs", name, n, strings.TrimSpace(sources[name][n-1]))
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d vector instructions of AVX2 kernels found in the line table", checked)
	}
	if bad > 10 {
		t.Errorf("... %d EVEX-encoded instructions in all", bad)
	}
}

// avx512LinesOfSources maps each .s file of the package to the lines that lie
// in TEXT blocks marked as AVX-512 by avx512Marks.
func avx512LinesOfSources(t *testing.T) map[string]map[int]bool {
	t.Helper()
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no assembly sources found: %v", err)
	}
	lines := make(map[string]map[int]bool)
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		marked := make(map[int]bool)
		all := strings.Split(string(src), "\n")
		start := -1
		flush := func(end int) {
			if start < 0 {
				return
			}
			block := strings.Join(all[start:end], "\n")
			if avx512Marks.MatchString(stripComments(block)) {
				for i := start; i < end; i++ {
					marked[i+1] = true
				}
			}
		}
		for i, l := range all {
			if strings.HasPrefix(l, "TEXT ") {
				flush(i)
				start = i
			}
		}
		flush(len(all))
		lines[name] = marked
	}
	return lines
}

var lineComment = regexp.MustCompile(`//.*`)

func stripComments(s string) string { return lineComment.ReplaceAllString(s, "") }

//go:build !purego

package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// The AMX-INT8 kernels of tile_amx_amd64.s (gen_tile_amx.py): the packed
// Q8_0 and Q4_0 products of two to ten tokens on the tile unit, with the
// packed VNNI kernels' layout, signature and bits. One token stays on
// VNNI, whose eight VPDPBUSD a block cost less than a tile product's fixed
// latency and the round trip of its sums through memory.

//go:generate python3 gen_tile_amx.py .

//go:noescape
func q8_0AMX2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q8_0AMX10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX2(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX3(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX4(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX5(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX6(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX7(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX8(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX9(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

//go:noescape
func q4_0AMX10(w *byte, x *int8, d *float32, c *int32, nb int, out *float32, ostride int, groups int)

var (
	q8_0AMXKernels = packedSet{nil, q8_0Packed1, q8_0AMX2, q8_0AMX3, q8_0AMX4, q8_0AMX5, q8_0AMX6, q8_0AMX7, q8_0AMX8, q8_0AMX9, q8_0AMX10}
	q4_0AMXKernels = packedSet{nil, q4_0Packed1, q4_0AMX2, q4_0AMX3, q4_0AMX4, q4_0AMX5, q4_0AMX6, q4_0AMX7, q4_0AMX8, q4_0AMX9, q4_0AMX10}
)

// AMXEnv names the environment variable that turns the AMX kernels off
// ("off"), read once at start-up, so that one machine can compare them with
// the VNNI ones.
const AMXEnv = "PARTNERAPI_AMX"

// cpuAMX reports whether the CPU has AMX-TILE and AMX-INT8 and the kernel
// gave this process the tile data state (Linux asks each process to
// request it: requestAMX).
var cpuAMX = cpuVNNI && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && requestAMX()

// tileAMX reports whether the packed Q8_0 and Q4_0 products of two or more
// tokens run on the AMX kernels (set once at start-up; tests switch it
// between calls).
var tileAMX = hasVNNI && cpuAMX && os.Getenv(AMXEnv) != "off"

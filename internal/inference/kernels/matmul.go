package kernels

import (
	"fmt"

	"partnerapi/internal/inference/gguf"
)

// Matrix is a weight matrix in ggml layout: Rows rows of Cols elements of
// Type, row after row (GGUF dims [Cols, Rows]). Data usually points into the
// model's memory mapping. Pack adds a repacked copy of the weights for the
// kernels that read one (packed.go).
type Matrix struct {
	Type gguf.GGMLType
	Rows int
	Cols int
	Data []byte

	packed      []byte
	packedGroup int // the rows of a group of packed (16 for AVX-512, 8 for AVX2)
}

// RowBytes is the encoded size of one row.
func (m Matrix) RowBytes() int { return rowBytes(m.Type, m.Cols) }

// Row returns the bytes of row r.
func (m Matrix) Row(r int) []byte {
	rb := m.RowBytes()
	return m.Data[r*rb : (r+1)*rb]
}

// Validate checks the type, the shape and the data length.
func (m Matrix) Validate() error {
	if !Supported(m.Type) {
		return fmt.Errorf("kernels: unsupported weight type %v", m.Type)
	}
	rb := m.RowBytes()
	if rb < 0 || m.Rows <= 0 {
		return fmt.Errorf("kernels: %d×%d is not a valid %v matrix (row length must be a whole number of %d-element blocks)", m.Rows, m.Cols, m.Type, m.Type.BlockSize())
	}
	if len(m.Data) != rb*m.Rows {
		return fmt.Errorf("kernels: %d×%d %v matrix needs %d bytes, has %d", m.Rows, m.Cols, m.Type, rb*m.Rows, len(m.Data))
	}
	return nil
}

// Dot is the dot product of one encoded row of type t with x.
func Dot(t gguf.GGMLType, row []byte, x []float32) float32 {
	if rowBytes(t, len(x)) != len(row) {
		panic(fmt.Sprintf("kernels: Dot: %d bytes of %v do not hold %d elements", len(row), t, len(x)))
	}
	var a activation
	a.prepare(activationKind(t), x)
	return rowDotFor(t)(row, &a)
}

// MatVec computes dst = w·x (len(x) = w.Cols, len(dst) = w.Rows).
func MatVec(dst []float32, w Matrix, x []float32) { MatMul(dst, w, x, 1) }

// MatMul computes nTokens products at once: x holds nTokens vectors of w.Cols
// values, dst receives nTokens vectors of w.Rows values. Each weight row is
// read once for all tokens, which is what makes batched prefill cheaper than
// nTokens calls to MatVec.
func MatMul(dst []float32, w Matrix, x []float32, nTokens int) {
	if len(x) != nTokens*w.Cols || len(dst) != nTokens*w.Rows || len(w.Data) != w.Rows*w.RowBytes() {
		panic(fmt.Sprintf("kernels: MatMul shapes: w %d×%d (%d bytes), x %d, dst %d, tokens %d", w.Rows, w.Cols, len(w.Data), len(x), len(dst), nTokens))
	}
	if rowDotFor(w.Type) == nil {
		panic(fmt.Sprintf("kernels: unsupported weight type %v", w.Type))
	}
	buf := activationPool.Get()
	defer activationPool.Put(buf)
	buf.reset()
	buf.prepare(w, x, w.Cols, nTokens)
	defer buf.release()
	unit := rowUnit()
	buf.bind()
	buf.dst, buf.w, buf.unit = dst, w, unit
	parallelFor((w.Rows+unit-1)/unit, w.Rows*w.Cols*nTokens, buf.mulFn)
	buf.dst, buf.w = nil, Matrix{}
}

// mulUnits computes units [lo, hi) of the MatMul in progress.
func (b *activationBuffer) mulUnits(lo, hi int) {
	b.mulRows(b.dst, b.w, lo*b.unit, min(hi*b.unit, b.w.Rows))
}

// bind makes the method values the products hand to the worker pool.
func (b *activationBuffer) bind() {
	if b.mulFn == nil {
		b.mulFn, b.mulManyFn = b.mulUnits, b.mulManyUnits
	}
}

// rowUnit is the number of rows the worker pool hands out as one item:
// a packed group where the packed kernels are in use, so that no split
// falls inside one (its rows would take the one-row tiles, whose bits
// differ, and a row's result would depend on how the pool split the
// product), else a row.
func rowUnit() int {
	if tilePacked {
		return packGroup
	}
	return 1
}

// mulRows computes rows [lo, hi) of w against every prepared activation with
// the per-token row dots, writing token t's value of row r to
// dst[t*w.Rows+r]. MatMul and MatMulMany share it so their results are the
// same bit for bit.
//
// The tokens are taken in blocks of mulRowsBlock(w, acts), each block
// against every row of the range. With the rows outer and every token
// inner, each row read all of the call's activations again: a 512-token
// prefill chunk of 576-wide float rows is 1.2 MB, more than a core's L2.
// A block's activations stay in the L1 or L2 across the rows, each weight
// row read once a block. On a quiet Zen 4 host this measured no different
// at 64 tokens (whose activations fit the L2 anyway) and 1.1–1.2× faster
// on a 512-token F16 down projection, within a noisy spread. A value's
// arithmetic is the same whatever the blocks: one (row, token) dot, in its
// kernel's own order.
func mulRows(dst []float32, w Matrix, acts []activation, lo, hi int) {
	dot := rowDotFor(w.Type)
	dot4 := rowDot4For(w.Type)
	dot2x4 := rowDot2x4For(w.Type)
	rb := w.RowBytes()
	block := mulRowsBlock(w, acts)
	for t0 := 0; t0 < len(acts); t0 += block {
		t1 := min(t0+block, len(acts))
		r := lo
		if dot2x4 != nil && t1-t0 >= 4 {
			for ; r+2 <= hi; r += 2 {
				row0, row1 := w.Data[r*rb:(r+1)*rb], w.Data[(r+1)*rb:(r+2)*rb]
				t := t0
				for ; t+4 <= t1; t += 4 {
					out := dot2x4(row0, row1, acts[t:t+4])
					for i, v := range out[:4] {
						dst[(t+i)*w.Rows+r] = v
					}
					for i, v := range out[4:] {
						dst[(t+i)*w.Rows+r+1] = v
					}
				}
				for ; t < t1; t++ {
					dst[t*w.Rows+r] = dot(row0, &acts[t])
					dst[t*w.Rows+r+1] = dot(row1, &acts[t])
				}
			}
		}
		for ; r < hi; r++ {
			row := w.Data[r*rb : (r+1)*rb]
			t := t0
			if dot4 != nil {
				for ; t+4 <= t1; t += 4 {
					out := dot4(row, acts[t:t+4])
					for i, v := range out {
						dst[(t+i)*w.Rows+r] = v
					}
				}
			}
			for ; t < t1; t++ {
				dst[t*w.Rows+r] = dot(row, &acts[t])
			}
		}
	}
}

// mulRowsActBytes is how many bytes of activations a block of mulRows
// reads at most: about an L1 (32–48 KB on the hosts measured), well inside
// an L2. 16, 64 and 128 KB measured the same at 64 tokens.
const mulRowsActBytes = 32 << 10

// mulRowsBlock is the number of tokens mulRows takes against the rows at a
// time: as many as fit mulRowsActBytes, a multiple of four (the four-token
// dots) and at least four.
func mulRowsBlock(w Matrix, acts []activation) int {
	per := w.Cols * 4 // float activations
	if len(acts) > 0 && acts[0].f == nil {
		per = w.Cols + w.Cols/8 // int8 values and their scales
	}
	return max(4, mulRowsActBytes/max(per, 1)&^3)
}

// activationBuffer holds the prepared activations of one call, one form per
// activation kind (plus the packed form of the tiled kernels), reused across
// calls through activationPool.
type activationBuffer struct {
	acts     [actKinds][]activation
	tiles    q8Tiles
	ktiles   [2]kTiles          // by kTilesIndex
	prepared [actKinds + 3]bool // the last three entries stand for tiles and ktiles

	// The product in progress: MatMul's dst, w and rows per unit, or
	// MatMulMany's ops, for the pool's workers. Its chunks are method
	// values bound once (bind), since a closure handed to the pool is
	// allocated on every call and a decode step is to allocate nothing.
	dst              []float32
	w                Matrix
	ops              []MatMulOp
	unit             int
	mulFn, mulManyFn func(lo, hi int)
}

func (b *activationBuffer) reset() { b.prepared = [actKinds + 3]bool{} }

// prepare makes the activations that weights of type t read from the
// nTokens vectors of x, unless an earlier call since reset already did.
func (b *activationBuffer) prepare(w Matrix, x []float32, cols, nTokens int) {
	t := w.Type
	if tiledType(t) || packedQ5(w) {
		// Only Q4_0 rows outside a packed group read the offset
		// corrections.
		cq := t == gguf.Q4_0 && (!tilePacked || w.packed == nil || w.Rows%packGroup != 0)
		if !b.prepared[actKinds] {
			b.tiles.prepareFor(x, cols, nTokens, cq)
			b.prepared[actKinds] = true
		} else if cq {
			b.tiles.corrections()
		}
		return
	}
	if packedKQuant(w) {
		k := actKind(kTilesIndex(w.packedGroup))
		if !b.prepared[actKinds+1+k] {
			b.ktiles[k].prepare(x, cols, nTokens, kTokens(w.packedGroup))
			b.prepared[actKinds+1+k] = true
		}
		b.ktiles[k].sums(t)
		if w.Rows%w.packedGroup == 0 {
			return // no row outside a whole group reads the row dots' activations
		}
	}
	kind := activationKind(t)
	if b.prepared[kind] {
		return
	}
	acts := grow(b.acts[kind], nTokens)
	b.acts[kind] = acts
	for i := range acts {
		acts[i].prepare(kind, x[i*cols:(i+1)*cols])
	}
	b.prepared[kind] = true
}

// mulRows computes rows [lo, hi) of dst = w·x from the prepared activations.
func (b *activationBuffer) mulRows(dst []float32, w Matrix, lo, hi int) {
	if packedQ5(w) {
		packedMulRows(dst, w, &b.tiles, lo, hi)
		return
	}
	if tiledType(w.Type) {
		if tilePacked && w.packed != nil {
			packedMulRows(dst, w, &b.tiles, lo, hi)
			return
		}
		tiledMulRows(dst, w, &b.tiles, lo, hi)
		return
	}
	if packedKQuant(w) {
		packedKMulRows(dst, w, &b.ktiles[kTilesIndex(w.packedGroup)], b.acts[actQ8_K], lo, hi)
		return
	}
	mulRows(dst, w, b.acts[activationKind(w.Type)], lo, hi)
}

// release drops the float views so the pool does not keep the caller's
// vectors alive.
func (b *activationBuffer) release() {
	for k := range b.acts {
		for t := range b.acts[k] {
			b.acts[k][t].f = nil
		}
	}
}

// activationPool keeps the activation buffers between products, up to a
// few MB each for a prefill chunk's quantised activations.
var activationPool = make(FreeList[activationBuffer], 8)

// ParallelFor exposes the worker pool to callers with row-parallel work of
// their own (attention heads, for example). work is an estimate of the
// multiply-adds, used to keep small jobs on the calling goroutine; it is
// held to the fixed parallelThreshold, not the calibrated one (split.go),
// since those estimates are unit conversions chosen against that threshold
// rather than measured times.
func ParallelFor(n, work int, fn func(lo, hi int)) { workers.parallel(n, work, parallelThreshold, fn) }

package kernels

import "fmt"

// MatMulOp is one product of a MatMulMany call.
type MatMulOp struct {
	Dst []float32 // nTokens vectors of W.Rows values
	W   Matrix
}

// MatMulMany computes op.Dst = op.W·x for every op, all sharing the input x
// (nTokens vectors of W.Cols values; every op has the same Cols). The
// activations are prepared (quantised) once per activation kind, and the rows
// of all ops are split over the worker pool in one parallel region, so Q/K/V
// or gate/up cost one hand-off.
//
// Each output value is computed by the same row kernel as MatMul, so the
// results are identical bit for bit to calling MatMul per op.
func MatMulMany(ops []MatMulOp, x []float32, nTokens int) {
	if len(ops) == 0 {
		return
	}
	cols := ops[0].W.Cols
	totalRows := 0
	for i, op := range ops {
		w := op.W
		if w.Cols != cols || len(x) != nTokens*w.Cols || len(op.Dst) != nTokens*w.Rows || len(w.Data) != w.Rows*w.RowBytes() {
			panic(fmt.Sprintf("kernels: MatMulMany op %d shapes: w %d×%d (%d bytes), x %d, dst %d, tokens %d, first op cols %d", i, w.Rows, w.Cols, len(w.Data), len(x), len(op.Dst), nTokens, cols))
		}
		if rowDotFor(w.Type) == nil {
			panic(fmt.Sprintf("kernels: unsupported weight type %v", w.Type))
		}
		totalRows += w.Rows
	}
	buf := activationPool.Get()
	defer activationPool.Put(buf)
	buf.reset()
	for _, op := range ops {
		buf.prepare(op.W, x, cols, nTokens)
	}
	defer buf.release()
	// The rows of all ops form one index space of units of rowUnit rows:
	// op i owns the units after those of ops 0..i-1, its last one possibly
	// partial. A worker's contiguous share may straddle two ops; it walks
	// each op's part of it in turn.
	unit := rowUnit()
	totalUnits := 0
	for _, op := range ops {
		totalUnits += (op.W.Rows + unit - 1) / unit
	}
	buf.bind()
	buf.ops, buf.unit = ops, unit
	parallelFor(totalUnits, totalRows*cols*nTokens, buf.mulManyFn)
	buf.ops = nil
}

// mulManyUnits computes units [lo, hi) of the MatMulMany in progress.
func (b *activationBuffer) mulManyUnits(lo, hi int) {
	base, unit := 0, b.unit
	for _, op := range b.ops {
		end := base + (op.W.Rows+unit-1)/unit
		if lo < end && hi > base {
			b.mulRows(op.Dst, op.W, (max(lo, base)-base)*unit, min((min(hi, end)-base)*unit, op.W.Rows))
		}
		base = end
	}
}

package kernels

import (
	"fmt"

	"partnerapi/internal/inference/gguf"
)

// Rewritten reports whether the loader turns weights of type t into
// another type with Rewrite where Pack does not pack them as they are:
// Q5_0, Q3_K and IQ4_NL (packed only by some kernel families), and Q4_1
// (never packed).
func Rewritten(t gguf.GGMLType) bool {
	return t == gguf.Q5_0 || t == gguf.Q3_K || t == gguf.IQ4_NL || t == gguf.Q4_1
}

// Rewrite returns a matrix of a type that Rewritten reports in the type the
// kernels compute it as, the same weights bit for bit in a new heap buffer:
// Q5_0 and IQ4_NL as Q8_0 (q5_0.go, iq4_nl.go), Q3_K as Q6_K (q3_k.go),
// Q4_1 as Q5_1 (q4_1.go). Other matrices come back unchanged.
func Rewrite(m Matrix) (Matrix, error) {
	if !Rewritten(m.Type) {
		return m, nil
	}
	rb := rowBytes(m.Type, m.Cols)
	if rb < 0 || m.Rows <= 0 || len(m.Data) != rb*m.Rows {
		return m, fmt.Errorf("kernels: %d×%d %v matrix with %d bytes is not whole blocks", m.Rows, m.Cols, m.Type, len(m.Data))
	}
	var to gguf.GGMLType
	var from, size int
	var conv func(dst, src []byte)
	switch m.Type {
	case gguf.Q5_0:
		to, from, size, conv = gguf.Q8_0, BlockQ5_0, BlockQ8_0, q5_0AsQ8_0
	case gguf.Q3_K:
		to, from, size, conv = gguf.Q6_K, BlockQ3_K, BlockQ6_K, q3KAsQ6K
	case gguf.IQ4_NL:
		to, from, size, conv = gguf.Q8_0, BlockIQ4_NL, BlockQ8_0, iq4NLAsQ8_0
	case gguf.Q4_1:
		to, from, size, conv = gguf.Q5_1, BlockQ4_1, BlockQ5_1, q4_1AsQ5_1
	}
	nb := len(m.Data) / from
	out := make([]byte, nb*size)
	for b := range nb {
		conv(out[b*size:][:size], m.Data[b*from:][:from])
	}
	return Matrix{Type: to, Rows: m.Rows, Cols: m.Cols, Data: out}, nil
}

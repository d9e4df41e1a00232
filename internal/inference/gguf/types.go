// Package gguf reads and writes GGUF v2/v3 model files (the llama.cpp
// container format): metadata key/value pairs, tensor descriptions and the
// tensor data, which stays memory-mapped so weights are never copied to the
// heap. Every count and offset in a file is checked against the bytes that
// remain before anything is allocated, so a truncated or hostile file is
// refused with an error instead of a panic or a huge allocation.
package gguf

import "fmt"

// ValueType is the type tag of a metadata value.
type ValueType uint32

// Metadata value types as numbered by the GGUF specification.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// scalarSize is the encoded size of a fixed-size value type, 0 for string
// and array (variable) and for unknown types.
func (t ValueType) scalarSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

func (t ValueType) isInteger() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

func (t ValueType) isSigned() bool {
	return t == TypeInt8 || t == TypeInt16 || t == TypeInt32 || t == TypeInt64
}

// GGMLType is the element type of a tensor (ggml's enum ggml_type).
type GGMLType uint32

// Tensor types. Only some have kernels (see package kernels); the others are
// listed so that files using them still parse and size correctly.
const (
	F32     GGMLType = 0
	F16     GGMLType = 1
	Q4_0    GGMLType = 2
	Q4_1    GGMLType = 3
	Q5_0    GGMLType = 6
	Q5_1    GGMLType = 7
	Q8_0    GGMLType = 8
	Q8_1    GGMLType = 9
	Q2_K    GGMLType = 10
	Q3_K    GGMLType = 11
	Q4_K    GGMLType = 12
	Q5_K    GGMLType = 13
	Q6_K    GGMLType = 14
	Q8_K    GGMLType = 15
	IQ2_XXS GGMLType = 16
	IQ2_XS  GGMLType = 17
	IQ3_XXS GGMLType = 18
	IQ1_S   GGMLType = 19
	IQ4_NL  GGMLType = 20
	IQ3_S   GGMLType = 21
	IQ2_S   GGMLType = 22
	IQ4_XS  GGMLType = 23
	I8      GGMLType = 24
	I16     GGMLType = 25
	I32     GGMLType = 26
	I64     GGMLType = 27
	F64     GGMLType = 28
	IQ1_M   GGMLType = 29
	BF16    GGMLType = 30
	TQ1_0   GGMLType = 34
	TQ2_0   GGMLType = 35
	MXFP4   GGMLType = 39
)

type typeTraits struct {
	name      string
	blockSize uint64 // elements per block
	typeSize  uint64 // bytes per block
}

// ggmlTypes is indexed by the type's number; gaps in the enum (removed
// types) are zero and count as unknown. An array rather than a map because
// the matrix kernels size a row (BlockSize, TypeSize) for every chunk of
// rows they are handed: a map lookup there was 3–4 % of a 15M-shape decode
// step's CPU time.
var ggmlTypes = [...]typeTraits{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2}, Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20},
	Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24}, Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 36},
	Q2_K: {"Q2_K", 256, 84}, Q3_K: {"Q3_K", 256, 110}, Q4_K: {"Q4_K", 256, 144}, Q5_K: {"Q5_K", 256, 176},
	Q6_K: {"Q6_K", 256, 210}, Q8_K: {"Q8_K", 256, 292}, IQ2_XXS: {"IQ2_XXS", 256, 66}, IQ2_XS: {"IQ2_XS", 256, 74},
	IQ3_XXS: {"IQ3_XXS", 256, 98}, IQ1_S: {"IQ1_S", 256, 50}, IQ4_NL: {"IQ4_NL", 32, 18}, IQ3_S: {"IQ3_S", 256, 110},
	IQ2_S: {"IQ2_S", 256, 82}, IQ4_XS: {"IQ4_XS", 256, 136}, I8: {"I8", 1, 1}, I16: {"I16", 1, 2},
	I32: {"I32", 1, 4}, I64: {"I64", 1, 8}, F64: {"F64", 1, 8}, IQ1_M: {"IQ1_M", 256, 56},
	BF16: {"BF16", 1, 2}, TQ1_0: {"TQ1_0", 256, 54}, TQ2_0: {"TQ2_0", 256, 66}, MXFP4: {"MXFP4", 32, 17},
}

func (t GGMLType) String() string {
	if tr, ok := traits(t); ok {
		return tr.name
	}
	return fmt.Sprintf("GGMLType(%d)", uint32(t))
}

// Known reports whether t is a tensor type this package can size.
func (t GGMLType) Known() bool { _, ok := traits(t); return ok }

// traits returns t's entry in ggmlTypes and whether t is a known type.
func traits(t GGMLType) (typeTraits, bool) {
	if uint64(t) >= uint64(len(ggmlTypes)) || ggmlTypes[t].blockSize == 0 {
		return typeTraits{}, false
	}
	return ggmlTypes[t], true
}

// BlockSize is the number of elements in one block of t (1 for float types).
func (t GGMLType) BlockSize() int { tr, _ := traits(t); return int(tr.blockSize) }

// TypeSize is the number of bytes in one block of t.
func (t GGMLType) TypeSize() int { tr, _ := traits(t); return int(tr.typeSize) }

// RowSize returns the bytes of n elements of type t, or an error when n is
// not a whole number of blocks.
func (t GGMLType) RowSize(n uint64) (uint64, error) {
	tr, ok := traits(t)
	if !ok {
		return 0, fmt.Errorf("gguf: unknown tensor type %d", uint32(t))
	}
	if n%tr.blockSize != 0 {
		return 0, fmt.Errorf("gguf: %d elements of %s is not a whole number of %d-element blocks", n, tr.name, tr.blockSize)
	}
	return n / tr.blockSize * tr.typeSize, nil
}

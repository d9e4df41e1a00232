package gguf

import "math"

// Value is one metadata value: a scalar, a string or an array. Arrays are
// held in typed slices rather than one Value per element, because vocabularies
// carry arrays of 150 000 tokens and scores.
type Value struct {
	Type ValueType
	// ElemType is the element type when Type is TypeArray.
	ElemType ValueType

	bits uint64  // integer scalars (two's complement for signed) and bool
	f    float64 // float scalars
	s    string

	strs   []string
	ints   []int64   // integer arrays; uint64 elements are stored bit-for-bit
	f32s   []float32 // float32 arrays
	f64s   []float64 // float64 arrays
	bools  []bool
	arrays []Value // arrays of arrays
}

// StringValue is a string metadata value.
func StringValue(s string) Value { return Value{Type: TypeString, s: s} }

// Uint32Value is a uint32 metadata value.
func Uint32Value(v uint32) Value { return Value{Type: TypeUint32, bits: uint64(v)} }

// Uint64Value is a uint64 metadata value.
func Uint64Value(v uint64) Value { return Value{Type: TypeUint64, bits: v} }

// Int32Value is an int32 metadata value.
func Int32Value(v int32) Value { return Value{Type: TypeInt32, bits: uint64(int64(v))} }

// Float32Value is a float32 metadata value.
func Float32Value(v float32) Value { return Value{Type: TypeFloat32, f: float64(v)} }

// BoolValue is a bool metadata value.
func BoolValue(b bool) Value {
	v := Value{Type: TypeBool}
	if b {
		v.bits = 1
	}
	return v
}

// StringsValue is an array-of-strings metadata value.
func StringsValue(s []string) Value { return Value{Type: TypeArray, ElemType: TypeString, strs: s} }

// Float32sValue is an array-of-float32 metadata value.
func Float32sValue(f []float32) Value { return Value{Type: TypeArray, ElemType: TypeFloat32, f32s: f} }

// Int32sValue is an array-of-int32 metadata value.
func Int32sValue(v []int32) Value {
	ints := make([]int64, len(v))
	for i, x := range v {
		ints[i] = int64(x)
	}
	return Value{Type: TypeArray, ElemType: TypeInt32, ints: ints}
}

// Len is the number of elements of an array value, 0 otherwise.
func (v Value) Len() int {
	if v.Type != TypeArray {
		return 0
	}
	switch {
	case v.ElemType == TypeString:
		return len(v.strs)
	case v.ElemType.isInteger():
		return len(v.ints)
	case v.ElemType == TypeFloat32:
		return len(v.f32s)
	case v.ElemType == TypeFloat64:
		return len(v.f64s)
	case v.ElemType == TypeBool:
		return len(v.bools)
	case v.ElemType == TypeArray:
		return len(v.arrays)
	}
	return 0
}

// AsString returns a string value.
func (v Value) AsString() (string, bool) { return v.s, v.Type == TypeString }

// AsUint returns an integer value that is not negative.
func (v Value) AsUint() (uint64, bool) {
	if !v.Type.isInteger() {
		return 0, false
	}
	if v.Type.isSigned() && int64(v.bits) < 0 {
		return 0, false
	}
	return v.bits, true
}

// AsInt returns an integer value that fits an int64.
func (v Value) AsInt() (int64, bool) {
	if !v.Type.isInteger() {
		return 0, false
	}
	if !v.Type.isSigned() && v.bits > math.MaxInt64 {
		return 0, false
	}
	return int64(v.bits), true
}

// AsFloat returns a float or integer value as a float64.
func (v Value) AsFloat() (float64, bool) {
	switch {
	case v.Type == TypeFloat32 || v.Type == TypeFloat64:
		return v.f, true
	case v.Type.isSigned():
		return float64(int64(v.bits)), true
	case v.Type.isInteger():
		return float64(v.bits), true
	}
	return 0, false
}

// AsBool returns a bool value.
func (v Value) AsBool() (bool, bool) { return v.bits != 0, v.Type == TypeBool }

// AsStrings returns an array of strings. The slice is shared: do not modify it.
func (v Value) AsStrings() ([]string, bool) {
	return v.strs, v.Type == TypeArray && v.ElemType == TypeString
}

// AsFloat32s returns an array of float32 (float64 arrays are converted).
func (v Value) AsFloat32s() ([]float32, bool) {
	if v.Type != TypeArray {
		return nil, false
	}
	switch v.ElemType {
	case TypeFloat32:
		return v.f32s, true
	case TypeFloat64:
		out := make([]float32, len(v.f64s))
		for i, x := range v.f64s {
			out[i] = float32(x)
		}
		return out, true
	}
	return nil, false
}

// AsInts returns an array of any integer type. uint64 elements above
// MaxInt64 appear as negative numbers (bit-for-bit).
func (v Value) AsInts() ([]int64, bool) {
	return v.ints, v.Type == TypeArray && v.ElemType.isInteger()
}

// AsArrays returns an array of arrays.
func (v Value) AsArrays() ([]Value, bool) {
	return v.arrays, v.Type == TypeArray && v.ElemType == TypeArray
}

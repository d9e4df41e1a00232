package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// DefaultAlignment is the tensor data alignment when general.alignment is absent.
const DefaultAlignment = 32

// maxDims is ggml's GGML_MAX_DIMS: tensors have at most four dimensions.
const maxDims = 4

// maxArrayDepth bounds nesting of arrays of arrays, so a hostile file cannot
// drive the recursive reader into a stack overflow.
const maxArrayDepth = 4

// ErrFormat wraps every error about a malformed file.
var ErrFormat = errors.New("gguf: malformed file")

// KV is one metadata pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor. Dims[0] is the contiguous (innermost)
// dimension; a weight matrix is [in, out]: out rows of in elements.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   GGMLType
	Offset uint64 // relative to the start of the data section
}

// NumElements is the product of the dimensions.
func (t TensorInfo) NumElements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Size is the tensor's size in bytes (0 when its type is unknown).
func (t TensorInfo) Size() uint64 {
	if len(t.Dims) == 0 {
		return 0
	}
	rows := t.NumElements() / max(t.Dims[0], 1)
	row, err := t.Type.RowSize(t.Dims[0])
	if err != nil {
		return 0
	}
	return row * rows
}

// File is a parsed GGUF file. Its tensor data stays in the mapping (or in the
// slice given to Parse); byte slices returned by TensorData are valid until
// Close and must not be written to.
type File struct {
	Version   uint32
	Alignment uint64
	KV        []KV
	Tensors   []TensorInfo

	data      []byte // the whole file
	dataStart uint64 // offset of the tensor data section
	kvIndex   map[string]int
	tensorIdx map[string]int
	mapping   *mapping // nil for Parse
}

// DataOffset is the file offset where the tensor data section starts.
func (f *File) DataOffset() uint64 { return f.dataStart }

// Get returns the metadata value for key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns a string value.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// Uint returns a non-negative value of any integer type.
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return v.AsUint()
}

// Float returns a value of any float or integer type.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return v.AsFloat()
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Get(key)
	if !ok {
		return false, false
	}
	return v.AsBool()
}

// Strings returns an array of strings (shared; do not modify).
func (f *File) Strings(key string) ([]string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	return v.AsStrings()
}

// Float32s returns an array of floats (shared when stored as float32).
func (f *File) Float32s(key string) ([]float32, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	return v.AsFloat32s()
}

// Ints returns an array of any integer type (shared; do not modify).
func (f *File) Ints(key string) ([]int64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	return v.AsInts()
}

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensorIdx[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData returns the bytes of one tensor inside the mapping.
func (f *File) TensorData(t TensorInfo) ([]byte, error) {
	if f.data == nil {
		return nil, errors.New("gguf: file is closed")
	}
	size, err := tensorSize(t)
	if err != nil {
		return nil, err
	}
	start, overflow := bits.Add64(f.dataStart, t.Offset, 0)
	end, overflow2 := bits.Add64(start, size, 0)
	if overflow != 0 || overflow2 != 0 || end > uint64(len(f.data)) {
		return nil, fmt.Errorf("%w: tensor %q (%d bytes at data offset %d) runs past the end of the file", ErrFormat, t.Name, size, t.Offset)
	}
	return f.data[start:end:end], nil
}

// tensorSize validates the shape and type of t and returns its byte size.
func tensorSize(t TensorInfo) (uint64, error) {
	if len(t.Dims) == 0 || len(t.Dims) > maxDims {
		return 0, fmt.Errorf("%w: tensor %q has %d dimensions (want 1..%d)", ErrFormat, t.Name, len(t.Dims), maxDims)
	}
	if !t.Type.Known() {
		return 0, fmt.Errorf("%w: tensor %q has unknown type %d", ErrFormat, t.Name, uint32(t.Type))
	}
	n := uint64(1)
	for _, d := range t.Dims {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("%w: tensor %q element count overflows", ErrFormat, t.Name)
		}
		n = lo
	}
	row, err := t.Type.RowSize(t.Dims[0])
	if err != nil {
		return 0, fmt.Errorf("%w: tensor %q: %v", ErrFormat, t.Name, err)
	}
	rows := uint64(0)
	if t.Dims[0] != 0 {
		rows = n / t.Dims[0]
	}
	hi, size := bits.Mul64(row, rows)
	if hi != 0 || size > math.MaxInt64 {
		return 0, fmt.Errorf("%w: tensor %q size overflows", ErrFormat, t.Name)
	}
	return size, nil
}

// decoder reads little-endian values from data, failing (sticky) on the
// first read past the end.
type decoder struct {
	data []byte
	pos  uint64
	err  error
}

func (d *decoder) remaining() uint64 { return uint64(len(d.data)) - d.pos }

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s (at byte %d)", ErrFormat, fmt.Sprintf(format, args...), d.pos)
	}
}

func (d *decoder) take(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.remaining() {
		d.fail("truncated %s: need %d bytes, %d remain", what, n, d.remaining())
		return nil
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *decoder) u8(what string) uint8 {
	b := d.take(1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) u16(what string) uint16 {
	b := d.take(2, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *decoder) u32(what string) uint32 {
	b := d.take(4, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64(what string) uint64 {
	b := d.take(8, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) str(what string) string {
	n := d.u64(what + " length")
	b := d.take(n, what)
	return string(b)
}

// count reads an element count and checks that count elements of at least
// minSize bytes each fit in the remaining bytes, so that allocations are
// bounded by the file size rather than by the number the file claims.
func (d *decoder) count(what string, minSize uint64) int {
	n := d.u64(what)
	if d.err != nil {
		return 0
	}
	if minSize == 0 {
		minSize = 1
	}
	if n > d.remaining()/minSize {
		d.fail("%s %d cannot fit in the %d remaining bytes", what, n, d.remaining())
		return 0
	}
	return int(n)
}

// Parse parses a GGUF file held in data. The returned File refers to data.
func Parse(data []byte) (*File, error) {
	d := &decoder{data: data}
	magic := d.take(4, "magic")
	if d.err != nil {
		return nil, d.err
	}
	if string(magic) != "GGUF" {
		return nil, fmt.Errorf("%w: bad magic %q (not a GGUF file)", ErrFormat, magic)
	}
	f := &File{data: data, Alignment: DefaultAlignment}
	f.Version = d.u32("version")
	if d.err != nil {
		return nil, d.err
	}
	switch {
	case f.Version == 1:
		return nil, fmt.Errorf("%w: GGUF version 1 is obsolete and not supported", ErrFormat)
	case f.Version != 2 && f.Version != 3:
		if bits.ReverseBytes32(f.Version) == 2 || bits.ReverseBytes32(f.Version) == 3 {
			return nil, fmt.Errorf("%w: big-endian GGUF files are not supported", ErrFormat)
		}
		return nil, fmt.Errorf("%w: unsupported GGUF version %d", ErrFormat, f.Version)
	}
	nTensors := d.u64("tensor count")
	nKV := d.u64("metadata count")
	if d.err != nil {
		return nil, d.err
	}
	// A KV pair is at least a key length (8), a type (4) and a 1-byte value;
	// a tensor info is at least a name length (8), n_dims (4), one dim (8),
	// a type (4) and an offset (8).
	if nKV > d.remaining()/13 {
		return nil, fmt.Errorf("%w: metadata count %d cannot fit in the file", ErrFormat, nKV)
	}
	if nTensors > d.remaining()/32 {
		return nil, fmt.Errorf("%w: tensor count %d cannot fit in the file", ErrFormat, nTensors)
	}
	f.KV = make([]KV, 0, nKV)
	f.kvIndex = make(map[string]int, nKV)
	for i := uint64(0); i < nKV; i++ {
		key := d.str("metadata key")
		typ := ValueType(d.u32("value type"))
		if d.err != nil {
			return nil, d.err
		}
		if key == "" {
			return nil, fmt.Errorf("%w: metadata pair %d has an empty key", ErrFormat, i)
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, fmt.Errorf("%w: duplicate metadata key %q", ErrFormat, key)
		}
		v := d.value(typ, 0)
		if d.err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, d.err)
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if v, ok := f.Get("general.alignment"); ok {
		a, ok := v.AsUint()
		if !ok || a == 0 || a&(a-1) != 0 || a > 1<<20 {
			return nil, fmt.Errorf("%w: general.alignment must be a power of two up to 1 MiB", ErrFormat)
		}
		f.Alignment = a
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tensorIdx = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		var t TensorInfo
		t.Name = d.str("tensor name")
		nDims := d.u32("tensor dimension count")
		if d.err != nil {
			return nil, d.err
		}
		if nDims == 0 || nDims > maxDims {
			return nil, fmt.Errorf("%w: tensor %q has %d dimensions (want 1..%d)", ErrFormat, t.Name, nDims, maxDims)
		}
		t.Dims = make([]uint64, nDims)
		for j := range t.Dims {
			t.Dims[j] = d.u64("tensor dimension")
		}
		t.Type = GGMLType(d.u32("tensor type"))
		t.Offset = d.u64("tensor offset")
		if d.err != nil {
			return nil, d.err
		}
		if _, dup := f.tensorIdx[t.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate tensor name %q", ErrFormat, t.Name)
		}
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("%w: tensor %q offset %d is not a multiple of the alignment %d", ErrFormat, t.Name, t.Offset, f.Alignment)
		}
		if _, err := tensorSize(t); err != nil {
			return nil, err
		}
		f.tensorIdx[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	// The data section starts at the next multiple of the alignment.
	f.dataStart = (d.pos + f.Alignment - 1) / f.Alignment * f.Alignment
	for _, t := range f.Tensors {
		if _, err := f.TensorData(t); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// value reads one metadata value of type typ.
func (d *decoder) value(typ ValueType, depth int) Value {
	v := Value{Type: typ}
	switch typ {
	case TypeUint8, TypeBool:
		v.bits = uint64(d.u8("value"))
		if typ == TypeBool && v.bits > 1 {
			d.fail("bool value %d is neither 0 nor 1", v.bits)
		}
	case TypeInt8:
		v.bits = uint64(int64(int8(d.u8("value"))))
	case TypeUint16:
		v.bits = uint64(d.u16("value"))
	case TypeInt16:
		v.bits = uint64(int64(int16(d.u16("value"))))
	case TypeUint32:
		v.bits = uint64(d.u32("value"))
	case TypeInt32:
		v.bits = uint64(int64(int32(d.u32("value"))))
	case TypeUint64, TypeInt64:
		v.bits = d.u64("value")
	case TypeFloat32:
		v.f = float64(math.Float32frombits(d.u32("value")))
	case TypeFloat64:
		v.f = math.Float64frombits(d.u64("value"))
	case TypeString:
		v.s = d.str("string value")
	case TypeArray:
		if depth >= maxArrayDepth {
			d.fail("arrays nested deeper than %d", maxArrayDepth)
			return v
		}
		v.ElemType = ValueType(d.u32("array element type"))
		d.array(&v, depth)
	default:
		d.fail("unknown value type %d", uint32(typ))
	}
	return v
}

func (d *decoder) array(v *Value, depth int) {
	et := v.ElemType
	switch {
	case et == TypeString:
		n := d.count("string array length", 8)
		v.strs = make([]string, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			v.strs = append(v.strs, d.str("string array element"))
		}
	case et == TypeArray:
		n := d.count("nested array length", 12)
		v.arrays = make([]Value, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			v.arrays = append(v.arrays, d.value(TypeArray, depth+1))
		}
	case et.scalarSize() > 0:
		size := uint64(et.scalarSize())
		n := d.count("array length", size)
		raw := d.take(uint64(n)*size, "array")
		if d.err != nil {
			return
		}
		switch et {
		case TypeFloat32:
			v.f32s = make([]float32, n)
			for i := range v.f32s {
				v.f32s[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		case TypeFloat64:
			v.f64s = make([]float64, n)
			for i := range v.f64s {
				v.f64s[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		case TypeBool:
			v.bools = make([]bool, n)
			for i := range v.bools {
				v.bools[i] = raw[i] != 0
			}
		default:
			v.ints = make([]int64, n)
			for i := range v.ints {
				v.ints[i] = decodeInt(et, raw[uint64(i)*size:])
			}
		}
	default:
		d.fail("unknown array element type %d", uint32(et))
	}
}

func decodeInt(t ValueType, b []byte) int64 {
	switch t {
	case TypeUint8:
		return int64(b[0])
	case TypeInt8:
		return int64(int8(b[0]))
	case TypeUint16:
		return int64(binary.LittleEndian.Uint16(b))
	case TypeInt16:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case TypeUint32:
		return int64(binary.LittleEndian.Uint32(b))
	case TypeInt32:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	default: // uint64, int64
		return int64(binary.LittleEndian.Uint64(b))
	}
}

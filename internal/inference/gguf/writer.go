package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WriteTensor is one tensor to write: Data must hold exactly the tensor's
// bytes in ggml layout.
type WriteTensor struct {
	Name string
	Dims []uint64
	Type GGMLType
	Data []byte
}

// Write writes a GGUF v3 file (used by tests and benchmarks to make
// quantised or random-weight models). The alignment is general.alignment
// when kvs set it, else 32.
func Write(w io.Writer, kvs []KV, tensors []WriteTensor) error {
	align := uint64(DefaultAlignment)
	for _, kv := range kvs {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.AsUint()
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: general.alignment must be a power of two")
			}
			align = a
		}
	}
	bw := bufio.NewWriter(w)
	e := &encoder{w: bw}
	e.bytes([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		if err := e.value(kv.Value); err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	offsets := make([]uint64, len(tensors))
	var off uint64
	for i, t := range tensors {
		size, err := tensorSize(TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type})
		if err != nil {
			return err
		}
		if uint64(len(t.Data)) != size {
			return fmt.Errorf("gguf: tensor %q has %d bytes of data, its shape needs %d", t.Name, len(t.Data), size)
		}
		offsets[i] = off
		off = (off + size + align - 1) / align * align
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offsets[i])
	}
	e.pad(align)
	for _, t := range tensors {
		e.bytes(t.Data)
		e.pad(align)
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

type encoder struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
	e.n += uint64(len(b))
}

func (e *encoder) pad(align uint64) {
	if r := e.n % align; r != 0 {
		e.bytes(make([]byte, align-r))
	}
}

func (e *encoder) u8(v uint8) { e.bytes([]byte{v}) }
func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], v)
	e.bytes(e.buf[:2])
}
func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.bytes(e.buf[:4])
}
func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.bytes(e.buf[:8])
}
func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.bytes([]byte(s))
}

func (e *encoder) scalar(t ValueType, bits uint64, f float64) {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		e.u8(uint8(bits))
	case TypeUint16, TypeInt16:
		e.u16(uint16(bits))
	case TypeUint32, TypeInt32:
		e.u32(uint32(bits))
	case TypeUint64, TypeInt64:
		e.u64(bits)
	case TypeFloat32:
		e.u32(math.Float32bits(float32(f)))
	case TypeFloat64:
		e.u64(math.Float64bits(f))
	}
}

func (e *encoder) value(v Value) error {
	switch {
	case v.Type == TypeString:
		e.str(v.s)
	case v.Type == TypeArray:
		e.u32(uint32(v.ElemType))
		e.u64(uint64(v.Len()))
		et := v.ElemType
		switch {
		case et == TypeString:
			for _, s := range v.strs {
				e.str(s)
			}
		case et == TypeArray:
			for _, a := range v.arrays {
				if err := e.value(a); err != nil {
					return err
				}
			}
		case et == TypeFloat32:
			for _, x := range v.f32s {
				e.scalar(et, 0, float64(x))
			}
		case et == TypeFloat64:
			for _, x := range v.f64s {
				e.scalar(et, 0, x)
			}
		case et == TypeBool:
			for _, b := range v.bools {
				if b {
					e.u8(1)
				} else {
					e.u8(0)
				}
			}
		case et.isInteger():
			for _, x := range v.ints {
				e.scalar(et, uint64(x), 0)
			}
		default:
			return fmt.Errorf("unknown array element type %d", uint32(et))
		}
	case v.Type.scalarSize() > 0:
		e.scalar(v.Type, v.bits, v.f)
	default:
		return fmt.Errorf("unknown value type %d", uint32(v.Type))
	}
	return e.err
}

package gguf

import (
	"bufio"
	"encoding/binary"
	"math"
)

// encoder writes little-endian GGUF fields to a buffered writer, counting the bytes;
// errors are sticky in the bufio.Writer and surface at Flush.
type encoder struct {
	w   *bufio.Writer
	n   int64 // bytes written so far: the current file offset
	buf [8]byte
}

// Write writes p, so tensor data functions can write through the encoder.
func (e *encoder) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.n += int64(n)
	return n, err
}

func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.Write(e.buf[:4])
}

func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.Write(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	n, _ := e.w.WriteString(s)
	e.n += int64(n)
}

// fixed writes the low bytes of bits for a fixed-size type.
func (e *encoder) fixed(t ValueType, bits uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], bits)
	e.Write(e.buf[:valueSizes[t]])
}

// value writes v's payload (not its type).
func (e *encoder) value(v Value) {
	switch v.typ {
	case StringType:
		e.str(v.str)
	case ArrayType:
		e.u32(uint32(v.elem))
		e.u64(uint64(v.Len()))
		e.elements(v)
	default:
		e.fixed(v.typ, v.bits)
	}
}

// elements writes an array's elements.
func (e *encoder) elements(v Value) {
	switch a := v.arr.(type) {
	case []string:
		for _, s := range a {
			e.str(s)
		}
	case []Value:
		for _, x := range a {
			e.value(x)
		}
	case []uint8:
		e.Write(a)
	case []float32:
		for _, x := range a {
			e.u32(math.Float32bits(x))
		}
	case []int32:
		for _, x := range a {
			e.u32(uint32(x))
		}
	case []uint32:
		for _, x := range a {
			e.u32(x)
		}
	default:
		for i := range v.Len() {
			e.fixed(v.elem, v.Index(i).bits)
		}
	}
}

// zeros writes n zero bytes.
func (e *encoder) zeros(n int64) {
	var z [64]byte
	for n > 0 {
		k := min(n, int64(len(z)))
		e.Write(z[:k])
		n -= k
	}
}

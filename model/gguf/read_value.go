package gguf

import (
	"encoding/binary"
	"math"
	"strconv"
)

// value reads one value of type t; depth counts enclosing arrays.
func (r *reader) value(t ValueType, depth int) (Value, error) {
	switch t {
	case StringType:
		s, err := r.string("string")
		return Str(s), err
	case ArrayType:
		return r.array(depth)
	case BoolType:
		b, err := r.uint8("bool") // any nonzero byte is true, as in llama.cpp
		return Bool(b != 0), err
	}
	if !t.Known() {
		return Value{}, r.errorf(r.off, "unknown value type %d", uint32(t))
	}
	b, err := r.next(int64(valueSizes[t]), t.String())
	if err != nil {
		return Value{}, err
	}
	return Value{typ: t, bits: scalarBits(t, b)}, nil
}

// scalarBits decodes a fixed-size number, sign-extending signed integers.
func scalarBits(t ValueType, b []byte) uint64 {
	switch t {
	case Uint8Type:
		return uint64(b[0])
	case Int8Type:
		return uint64(int64(int8(b[0])))
	case Uint16Type:
		return uint64(binary.LittleEndian.Uint16(b))
	case Int16Type:
		return uint64(int64(int16(binary.LittleEndian.Uint16(b))))
	case Uint32Type, Float32Type:
		return uint64(binary.LittleEndian.Uint32(b))
	case Int32Type:
		return uint64(int64(int32(binary.LittleEndian.Uint32(b))))
	}
	return binary.LittleEndian.Uint64(b)
}

// array reads an array's element type, count and elements.
func (r *reader) array(depth int) (Value, error) {
	at := r.off
	if depth >= maxNesting {
		return Value{}, r.errorf(at, "arrays nested deeper than %d", maxNesting)
	}
	et, err := r.uint32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Known() {
		return Value{}, r.errorf(at, "unknown array element type %d", et)
	}
	n, err := r.count("array length", elem.minSize())
	if err != nil {
		return Value{}, err
	}
	switch elem {
	case StringType:
		a, err := elements(r, n, func(i int) (string, error) { return r.string("string") })
		return Strings(a), err
	case ArrayType:
		a, err := elements(r, n, func(i int) (Value, error) { return r.array(depth + 1) })
		return array(ArrayType, a), err
	case BoolType:
		a, err := elements(r, n, func(i int) (bool, error) { v, err := r.value(BoolType, depth); return v.bits != 0, err })
		return BoolArray(a), err
	}
	b, err := r.next(int64(n)*int64(valueSizes[elem]), "array data")
	if err != nil {
		return Value{}, err
	}
	return array(elem, decodeNumbers(elem, b, n)), nil
}

// elements reads n variable-size elements; errors name the element's index.
func elements[T any](r *reader, n int, read func(i int) (T, error)) ([]T, error) {
	out := make([]T, n) // n was bounded by the remaining bytes in count
	for i := range out {
		v, err := read(i)
		if err != nil {
			return nil, inField(err, "["+strconv.Itoa(i)+"]")
		}
		out[i] = v
	}
	return out, nil
}

// decodeNumbers decodes n little-endian numbers of type t from b.
func decodeNumbers(t ValueType, b []byte, n int) any {
	switch t {
	case Uint8Type:
		out := make([]uint8, n)
		copy(out, b)
		return out
	case Int8Type:
		return decode(b, n, 1, func(p []byte) int8 { return int8(p[0]) })
	case Uint16Type:
		return decode(b, n, 2, binary.LittleEndian.Uint16)
	case Int16Type:
		return decode(b, n, 2, func(p []byte) int16 { return int16(binary.LittleEndian.Uint16(p)) })
	case Uint32Type:
		return decode(b, n, 4, binary.LittleEndian.Uint32)
	case Int32Type:
		return decode(b, n, 4, func(p []byte) int32 { return int32(binary.LittleEndian.Uint32(p)) })
	case Float32Type:
		return decode(b, n, 4, func(p []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(p)) })
	case Uint64Type:
		return decode(b, n, 8, binary.LittleEndian.Uint64)
	case Int64Type:
		return decode(b, n, 8, func(p []byte) int64 { return int64(binary.LittleEndian.Uint64(p)) })
	}
	return decode(b, n, 8, func(p []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(p)) })
}

func decode[T any](b []byte, n, size int, f func([]byte) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(b[i*size:])
	}
	return out
}

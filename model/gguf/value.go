package gguf

import (
	"fmt"
	"math"
)

// ValueType is the type of a metadata value, as stored in the file.
type ValueType uint32

// The GGUF metadata value types.
const (
	Uint8Type ValueType = iota
	Int8Type
	Uint16Type
	Int16Type
	Uint32Type
	Int32Type
	Float32Type
	BoolType
	StringType
	ArrayType
	Uint64Type
	Int64Type
	Float64Type
)

var valueTypeNames = [...]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// valueSizes is the encoded size of each fixed-size type (0 for string and array).
var valueSizes = [...]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// Known reports whether t is one of the GGUF value types.
func (t ValueType) Known() bool { return int(t) < len(valueTypeNames) }

// String returns the GGUF name of t ("uint32", "string", ...).
func (t ValueType) String() string {
	if t.Known() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// minSize is the fewest bytes one value of type t takes in a file.
func (t ValueType) minSize() int64 {
	switch t {
	case StringType:
		return 8 // length
	case ArrayType:
		return 4 + 8 // element type, count
	}
	return int64(valueSizes[t])
}

// A Value is one typed metadata value. Scalars hold their bits; arrays hold a typed Go
// slice ([]uint32, []string, ..., or []Value for arrays of arrays). The zero Value is a
// uint8 0. Values are immutable once built; the slices they return must not be modified.
type Value struct {
	typ  ValueType
	elem ValueType // element type, for arrays
	bits uint64    // scalar numbers and bools
	str  string
	arr  any
}

// Type returns the value's type (ArrayType for arrays).
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array (and v.Type() for a scalar).
func (v Value) ElemType() ValueType {
	if v.typ == ArrayType {
		return v.elem
	}
	return v.typ
}

// Len returns the number of elements of an array, and 1 for a scalar.
func (v Value) Len() int {
	if v.typ != ArrayType {
		return 1
	}
	switch a := v.arr.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// Index returns element i of an array as a Value. It panics if v is not an array or i
// is out of range.
func (v Value) Index(i int) Value {
	switch a := v.arr.(type) {
	case []uint8:
		return Uint8(a[i])
	case []int8:
		return Int8(a[i])
	case []uint16:
		return Uint16(a[i])
	case []int16:
		return Int16(a[i])
	case []uint32:
		return Uint32(a[i])
	case []int32:
		return Int32(a[i])
	case []float32:
		return Float32(a[i])
	case []bool:
		return Bool(a[i])
	case []string:
		return Str(a[i])
	case []uint64:
		return Uint64(a[i])
	case []int64:
		return Int64(a[i])
	case []float64:
		return Float64(a[i])
	case []Value:
		return a[i]
	}
	panic("gguf: Index of a non-array Value")
}

// AsUint returns an integer value as uint64; ok is false for other types and for
// negative values.
func (v Value) AsUint() (u uint64, ok bool) {
	switch v.typ {
	case Uint8Type, Uint16Type, Uint32Type, Uint64Type:
		return v.bits, true
	case Int8Type, Int16Type, Int32Type, Int64Type:
		if i := int64(v.bits); i >= 0 {
			return uint64(i), true
		}
	}
	return 0, false
}

// AsInt returns an integer value as int64; ok is false for other types and for uint64
// values above math.MaxInt64.
func (v Value) AsInt() (i int64, ok bool) {
	switch v.typ {
	case Int8Type, Int16Type, Int32Type, Int64Type, Uint8Type, Uint16Type, Uint32Type:
		return int64(v.bits), true
	case Uint64Type:
		if v.bits <= math.MaxInt64 {
			return int64(v.bits), true
		}
	}
	return 0, false
}

// AsFloat returns a float32 or float64 value as float64.
func (v Value) AsFloat() (float64, bool) {
	switch v.typ {
	case Float32Type:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case Float64Type:
		return math.Float64frombits(v.bits), true
	}
	return 0, false
}

// AsBool returns a bool value.
func (v Value) AsBool() (b, ok bool) { return v.bits != 0, v.typ == BoolType }

// AsString returns a string value.
func (v Value) AsString() (string, bool) { return v.str, v.typ == StringType }

// AsStrings returns an array of strings.
func (v Value) AsStrings() ([]string, bool) { a, ok := v.arr.([]string); return a, ok }

// AsFloat32s returns an array of float32.
func (v Value) AsFloat32s() ([]float32, bool) { a, ok := v.arr.([]float32); return a, ok }

// AsInt32s returns an array of int32.
func (v Value) AsInt32s() ([]int32, bool) { a, ok := v.arr.([]int32); return a, ok }

// AsUint32s returns an array of uint32.
func (v Value) AsUint32s() ([]uint32, bool) { a, ok := v.arr.([]uint32); return a, ok }

// Slice returns the array's elements as their typed Go slice ([]uint8 ... []float64,
// []bool, []string, or []Value for arrays of arrays); nil for a scalar.
func (v Value) Slice() any { return v.arr }

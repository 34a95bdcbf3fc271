package gguf

import "math"

// Uint8 returns a uint8 Value.
func Uint8(x uint8) Value { return Value{typ: Uint8Type, bits: uint64(x)} }

// Int8 returns an int8 Value.
func Int8(x int8) Value { return Value{typ: Int8Type, bits: uint64(int64(x))} }

// Uint16 returns a uint16 Value.
func Uint16(x uint16) Value { return Value{typ: Uint16Type, bits: uint64(x)} }

// Int16 returns an int16 Value.
func Int16(x int16) Value { return Value{typ: Int16Type, bits: uint64(int64(x))} }

// Uint32 returns a uint32 Value.
func Uint32(x uint32) Value { return Value{typ: Uint32Type, bits: uint64(x)} }

// Int32 returns an int32 Value.
func Int32(x int32) Value { return Value{typ: Int32Type, bits: uint64(int64(x))} }

// Float32 returns a float32 Value.
func Float32(x float32) Value { return Value{typ: Float32Type, bits: uint64(math.Float32bits(x))} }

// Bool returns a bool Value.
func Bool(b bool) Value {
	v := Value{typ: BoolType}
	if b {
		v.bits = 1
	}
	return v
}

// Str returns a string Value.
func Str(s string) Value { return Value{typ: StringType, str: s} }

// Uint64 returns a uint64 Value.
func Uint64(x uint64) Value { return Value{typ: Uint64Type, bits: x} }

// Int64 returns an int64 Value.
func Int64(x int64) Value { return Value{typ: Int64Type, bits: uint64(x)} }

// Float64 returns a float64 Value.
func Float64(x float64) Value { return Value{typ: Float64Type, bits: math.Float64bits(x)} }

func array(elem ValueType, a any) Value { return Value{typ: ArrayType, elem: elem, arr: a} }

// Strings returns an array-of-string Value. The Value keeps a, which must not change.
func Strings(a []string) Value { return array(StringType, a) }

// Float32Array returns an array-of-float32 Value holding a.
func Float32Array(a []float32) Value { return array(Float32Type, a) }

// Int32Array returns an array-of-int32 Value holding a.
func Int32Array(a []int32) Value { return array(Int32Type, a) }

// Uint32Array returns an array-of-uint32 Value holding a.
func Uint32Array(a []uint32) Value { return array(Uint32Type, a) }

// Uint8Array returns an array-of-uint8 Value holding a.
func Uint8Array(a []uint8) Value { return array(Uint8Type, a) }

// Int8Array returns an array-of-int8 Value holding a.
func Int8Array(a []int8) Value { return array(Int8Type, a) }

// Uint16Array returns an array-of-uint16 Value holding a.
func Uint16Array(a []uint16) Value { return array(Uint16Type, a) }

// Int16Array returns an array-of-int16 Value holding a.
func Int16Array(a []int16) Value { return array(Int16Type, a) }

// Uint64Array returns an array-of-uint64 Value holding a.
func Uint64Array(a []uint64) Value { return array(Uint64Type, a) }

// Int64Array returns an array-of-int64 Value holding a.
func Int64Array(a []int64) Value { return array(Int64Type, a) }

// Float64Array returns an array-of-float64 Value holding a.
func Float64Array(a []float64) Value { return array(Float64Type, a) }

// BoolArray returns an array-of-bool Value holding a.
func BoolArray(a []bool) Value { return array(BoolType, a) }

// Array returns an array of elem-typed Values; it is the way to build arrays of arrays
// (elem ArrayType). Scalar element types are stored as their typed slice, so
// Array(Uint32Type, vs) equals Uint32Array of the same numbers. It panics if an
// element's type is not elem or elem is not a GGUF type: that is a programming error.
func Array(elem ValueType, vs []Value) Value {
	if !elem.Known() {
		panic("gguf: Array of unknown element type")
	}
	for _, v := range vs {
		if v.typ != elem {
			panic("gguf: Array element of type " + v.typ.String() + ", want " + elem.String())
		}
	}
	switch elem {
	case ArrayType:
		return array(ArrayType, vs)
	case StringType:
		return Strings(collect(vs, func(v Value) string { return v.str }))
	case BoolType:
		return BoolArray(collect(vs, func(v Value) bool { return v.bits != 0 }))
	}
	return array(elem, numbers(elem, vs))
}

func collect[T any](vs []Value, f func(Value) T) []T {
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}

// numbers converts scalar numeric Values of type elem to the matching typed slice.
func numbers(elem ValueType, vs []Value) any {
	switch elem {
	case Uint8Type:
		return collect(vs, func(v Value) uint8 { return uint8(v.bits) })
	case Int8Type:
		return collect(vs, func(v Value) int8 { return int8(v.bits) })
	case Uint16Type:
		return collect(vs, func(v Value) uint16 { return uint16(v.bits) })
	case Int16Type:
		return collect(vs, func(v Value) int16 { return int16(v.bits) })
	case Uint32Type:
		return collect(vs, func(v Value) uint32 { return uint32(v.bits) })
	case Int32Type:
		return collect(vs, func(v Value) int32 { return int32(v.bits) })
	case Float32Type:
		return collect(vs, func(v Value) float32 { return math.Float32frombits(uint32(v.bits)) })
	case Uint64Type:
		return collect(vs, func(v Value) uint64 { return v.bits })
	case Int64Type:
		return collect(vs, func(v Value) int64 { return int64(v.bits) })
	}
	return collect(vs, func(v Value) float64 { return math.Float64frombits(v.bits) })
}

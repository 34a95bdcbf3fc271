package gguf

import (
	"math"

	"github.com/infergo/infer/tensor"
)

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name   string
	Dims   []uint64     // ggml order: Dims[0] is the row length (the innermost dimension)
	Type   tensor.DType // element encoding
	Offset uint64       // start of the data, relative to File.DataOffset
}

// Elements returns the number of elements, the product of Dims.
func (ti TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range ti.Dims {
		n *= d
	}
	return n
}

// Rows returns the number of rows: Elements() / Dims[0] (1 for a rank-0 tensor).
func (ti TensorInfo) Rows() uint64 {
	n := uint64(1)
	for _, d := range ti.Dims[min(1, len(ti.Dims)):] {
		n *= d
	}
	return n
}

// RowLen returns Dims[0], the number of elements in one row (1 for a rank-0 tensor).
func (ti TensorInfo) RowLen() uint64 {
	if len(ti.Dims) == 0 {
		return 1
	}
	return ti.Dims[0]
}

// Bytes returns the size of the tensor's data. The row length must be a multiple of
// the type's block size, which Parse and Writer.AddTensor check.
func (ti TensorInfo) Bytes() uint64 {
	bs := uint64(ti.Type.BlockSize())
	if bs == 0 {
		return 0
	}
	return ti.RowLen() / bs * uint64(ti.Type.BlockBytes()) * ti.Rows()
}

// checkShape validates dims and type the way llama.cpp's gguf reader does, returning a
// message for the first problem, or "" when the tensor is well formed.
func checkShape(dims []uint64, dt tensor.DType) string {
	if len(dims) > MaxRank {
		return "rank " + itoa(uint64(len(dims))) + " exceeds " + itoa(MaxRank)
	}
	n := uint64(1)
	for i, d := range dims {
		if d > math.MaxInt64 {
			return "dimension " + itoa(uint64(i)) + " is " + itoa(d) + ", above the int64 range"
		}
		if d != 0 && n > math.MaxInt64/d {
			return "dims " + dimsString(dims) + ": element count overflows int64"
		}
		n *= d
	}
	if !dt.Known() {
		return "unknown tensor type " + itoa(uint64(dt))
	}
	rowLen := TensorInfo{Dims: dims}.RowLen()
	if bs := uint64(dt.BlockSize()); rowLen%bs != 0 {
		return "row length " + itoa(rowLen) + " is not a multiple of the " + dt.String() + " block size " + itoa(bs)
	}
	if n/uint64(dt.BlockSize()) > math.MaxInt64/uint64(dt.BlockBytes()) {
		return "dims " + dimsString(dims) + ": size in bytes overflows int64"
	}
	return ""
}

// Package tensor holds the element types of GGUF tensors: their block layouts, the
// conversions to and from float32 (dequantize, reference quantizers bit-identical to
// llama.cpp's quantize_row_*_ref), and the dot products of weight rows against
// quantized activations the way llama.cpp's CPU path computes them.
//
// Quantized formats store a row as a sequence of blocks; a row of n elements of type t
// takes t.RowBytes(n) bytes and n must be a multiple of t.BlockSize().
package tensor

import (
	"fmt"
	"strings"
)

// DType is a GGUF tensor type; its values are the GGUF (ggml_type) ids.
type DType uint32

// The GGUF type ids this package knows.
const (
	F32  DType = 0
	F16  DType = 1
	Q4_0 DType = 2
	Q4_1 DType = 3
	Q5_0 DType = 6
	Q5_1 DType = 7
	Q8_0 DType = 8
	Q8_1 DType = 9
	Q2_K DType = 10
	Q3_K DType = 11
	Q4_K DType = 12
	Q5_K DType = 13
	Q6_K DType = 14
	Q8_K DType = 15
	I8   DType = 24
	I16  DType = 25
	I32  DType = 26
	I64  DType = 27
	F64  DType = 28
	BF16 DType = 30
)

// QK is the block size of the 32-element formats, QKK that of the k-quants.
const (
	QK  = 32
	QKK = 256
)

// traits describes one DType. The function fields are nil where the operation does not
// exist for the type (for example Quantize of Q8_K as a weight format is allowed, but a
// dot product with Q8_K weights is not).
type traits struct {
	name              string
	blockSize         int // elements per block
	blockBytes        int // bytes per block
	vecDot            DType
	dequantize        func(dst []float32, src []byte)
	quantize          func(dst []byte, src []float32)
	dot               func(n int, w, x []byte) float32
	fromFloat         func(dst []byte, src []float32)                                                                 // activations (QuantizeActivations) where not quantize
	dotX86            func(n int, w, x []byte) float32                                                                // dot in llama.cpp's x86 float order (X86DotFunc)
	dotTileX86        func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) // X86DotTileFunc
	dotTile           func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) // DotTileFunc
	dotRepack         func(n int, w, x []byte) float32                                                                // dot in the order of llama.cpp's x86 repacked gemv/gemm (X86RepackDotFunc)
	dotRepackGemm     func(n int, w, x []byte) float32                                                                // X86RepackGemmDotFunc
	dotRepackGemmTile func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) // X86RepackGemmTileFunc
	dotRepackTile     func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) // X86RepackTileFunc
}

// table is indexed by DType; an entry with blockSize 0 is an unknown type.
var table = [...]traits{
	F32:  {name: "F32", blockSize: 1, blockBytes: 4, vecDot: F32, dequantize: dequantizeF32, quantize: quantizeF32, dot: dotF32},
	F16:  {name: "F16", blockSize: 1, blockBytes: 2, vecDot: F16, dequantize: dequantizeF16, quantize: quantizeF16, dot: dotF16},
	BF16: {name: "BF16", blockSize: 1, blockBytes: 2, vecDot: BF16, dequantize: dequantizeBF16, quantize: quantizeBF16, dot: dotBF16},
	Q4_0: {name: "Q4_0", blockSize: QK, blockBytes: 2 + QK/2, vecDot: Q8_0, dequantize: dequantizeQ4_0, quantize: quantizeQ4_0, dot: dotQ4_0, dotTile: dotQ4_0Tile, dotX86: dotQ4_0x86, dotTileX86: dotQ4_0x86Tile, dotRepack: dotQ4_0Repack, dotRepackGemm: dotQ4_0Repack, dotRepackGemmTile: dotQ4_0RepackTile, dotRepackTile: dotQ4_0RepackTile},
	Q4_1: {name: "Q4_1", blockSize: QK, blockBytes: 4 + QK/2, vecDot: Q8_1, dequantize: dequantizeQ4_1, quantize: quantizeQ4_1, dot: dotQ4_1, dotX86: dotQ4_1x86, dotTileX86: dotQ4_1x86Tile},
	Q5_0: {name: "Q5_0", blockSize: QK, blockBytes: 2 + 4 + QK/2, vecDot: Q8_0, dequantize: dequantizeQ5_0, quantize: quantizeQ5_0, dot: dotQ5_0, dotX86: dotQ5_0x86, dotTileX86: dotQ5_0x86Tile},
	Q5_1: {name: "Q5_1", blockSize: QK, blockBytes: 4 + 4 + QK/2, vecDot: Q8_1, dequantize: dequantizeQ5_1, quantize: quantizeQ5_1, dot: dotQ5_1},
	Q8_0: {name: "Q8_0", blockSize: QK, blockBytes: 2 + QK, vecDot: Q8_0, dequantize: dequantizeQ8_0, quantize: quantizeQ8_0, dot: dotQ8_0, fromFloat: quantizeQ8_0x86, dotX86: dotQ8_0x86, dotTileX86: dotQ8_0x86Tile},
	Q8_1: {name: "Q8_1", blockSize: QK, blockBytes: 4 + QK, vecDot: Q8_1, dequantize: dequantizeQ8_1, quantize: quantizeQ8_1, fromFloat: quantizeQ8_1x86},
	Q2_K: {name: "Q2_K", blockSize: QKK, blockBytes: QKK/16 + QKK/4 + 4, vecDot: Q8_K, dequantize: dequantizeQ2K, quantize: quantizeQ2K, dot: dotQ2K},
	Q3_K: {name: "Q3_K", blockSize: QKK, blockBytes: QKK/8 + QKK/4 + 12 + 2, vecDot: Q8_K, dequantize: dequantizeQ3K, quantize: quantizeQ3K, dot: dotQ3K},
	Q4_K: {name: "Q4_K", blockSize: QKK, blockBytes: 4 + 12 + QKK/2, vecDot: Q8_K, dequantize: dequantizeQ4K, quantize: quantizeQ4K, dot: dotQ4K, dotRepack: dotQ4KRepack, dotRepackGemm: dotQ4KRepackGemm, dotRepackGemmTile: dotQ4KRepackGemmTile, dotRepackTile: dotQ4KRepackTile},
	Q5_K: {name: "Q5_K", blockSize: QKK, blockBytes: 4 + 12 + QKK/8 + QKK/2, vecDot: Q8_K, dequantize: dequantizeQ5K, quantize: quantizeQ5K, dot: dotQ5K, dotX86: dotQ5Kx86, dotTileX86: dotQ5Kx86Tile},
	Q6_K: {name: "Q6_K", blockSize: QKK, blockBytes: QKK/2 + QKK/4 + QKK/16 + 2, vecDot: Q8_K, dequantize: dequantizeQ6K, quantize: quantizeQ6K, dot: dotQ6K, dotX86: dotQ6Kx86, dotTileX86: dotQ6Kx86Tile},
	Q8_K: {name: "Q8_K", blockSize: QKK, blockBytes: 4 + QKK + QKK/16*2, vecDot: Q8_K, dequantize: dequantizeQ8K, quantize: quantizeQ8K},
	I8:   {name: "I8", blockSize: 1, blockBytes: 1, vecDot: I8},
	I16:  {name: "I16", blockSize: 1, blockBytes: 2, vecDot: I16},
	I32:  {name: "I32", blockSize: 1, blockBytes: 4, vecDot: I32},
	I64:  {name: "I64", blockSize: 1, blockBytes: 8, vecDot: I64},
	F64:  {name: "F64", blockSize: 1, blockBytes: 8, vecDot: F64},
}

func (t DType) traits() *traits {
	if int(t) < len(table) && table[t].blockSize != 0 {
		return &table[t]
	}
	return nil
}

// Known reports whether t is a type this package can describe.
func (t DType) Known() bool { return t.traits() != nil }

// String returns the type's ggml name (F32, Q4_K, ...), or DType(n) for an unknown id.
func (t DType) String() string {
	if tr := t.traits(); tr != nil {
		return tr.name
	}
	return fmt.Sprintf("DType(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (1 for F32, F16, BF16).
func (t DType) BlockSize() int {
	if tr := t.traits(); tr != nil {
		return tr.blockSize
	}
	return 0
}

// BlockBytes is the number of bytes in one block.
func (t DType) BlockBytes() int {
	if tr := t.traits(); tr != nil {
		return tr.blockBytes
	}
	return 0
}

// RowBytes is the size in bytes of n elements; n must be a multiple of BlockSize.
func (t DType) RowBytes(n int) int {
	tr := t.traits()
	if tr == nil {
		return 0
	}
	return n / tr.blockSize * tr.blockBytes
}

// VecDotType is the type activations are converted to before a dot product with a
// weight row of type t (Q8_0 for Q4_0, Q8_K for the k-quants, F32 for F32, ...).
func (t DType) VecDotType() DType {
	if tr := t.traits(); tr != nil {
		return tr.vecDot
	}
	return t
}

// ParseDType returns the DType named s (case-insensitive: "q4_0", "Q4_K", "f16").
func ParseDType(s string) (DType, error) {
	for i := range table {
		if table[i].blockSize != 0 && strings.EqualFold(table[i].name, s) {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("tensor: unknown type %q", s)
}

// checkLen returns an error unless n elements of t fit the given byte and element counts.
func checkLen(op string, t DType, n, nbytes int) error {
	tr := t.traits()
	switch {
	case tr == nil:
		return fmt.Errorf("tensor: %s: unknown type %v", op, t)
	case n%tr.blockSize != 0:
		return fmt.Errorf("tensor: %s %v: %d elements is not a multiple of the block size %d", op, t, n, tr.blockSize)
	case nbytes < t.RowBytes(n):
		return fmt.Errorf("tensor: %s %v: %d elements need %d bytes, have %d", op, t, n, t.RowBytes(n), nbytes)
	}
	return nil
}

// Dequantize decodes len(dst) elements of type t from src into dst.
func Dequantize(t DType, dst []float32, src []byte) error {
	if err := checkLen("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	f := t.traits().dequantize
	if f == nil {
		return fmt.Errorf("tensor: dequantize %v: not supported", t)
	}
	f(dst, src)
	return nil
}

// Quantize encodes src as type t into dst, producing the same bytes as llama.cpp's
// quantize_row_*_ref.
func Quantize(t DType, dst []byte, src []float32) error {
	if err := checkLen("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	f := t.traits().quantize
	if f == nil {
		return fmt.Errorf("tensor: quantize %v: not supported", t)
	}
	f(dst, src)
	return nil
}

// DotFunc returns the function computing the dot product of n elements of a weight row
// w of type t with activations x of type t.VecDotType(), or an error when t has none.
// Hot loops fetch it once and call it per row.
func DotFunc(t DType) (func(n int, w, x []byte) float32, error) {
	tr := t.traits()
	if tr == nil || tr.dot == nil {
		return nil, fmt.Errorf("tensor: dot product with %v weights: not supported", t)
	}
	return tr.dot, nil
}

// DotTileFunc returns, where there is one (nil otherwise), the function computing a
// tile of a matrix product with DotFunc(t)'s bits: for o < mw and i < mx,
//
//	dst[i*dstStride+o] = DotFunc(t)(n, w[o*wStride:], x[i*xStride:])
//
// faster than one dot after another. There is one for Q4_0.
func DotTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if tr := t.traits(); tr != nil {
		return tr.dotTile
	}
	return nil
}

// Dot is the dot product of n elements of weight row w (type t) with activations x
// (type t.VecDotType()).
func Dot(t DType, n int, w, x []byte) (float32, error) {
	f, err := DotFunc(t)
	if err != nil {
		return 0, err
	}
	if err := checkLen("dot", t, n, len(w)); err != nil {
		return 0, err
	}
	if err := checkLen("dot", t.VecDotType(), n, len(x)); err != nil {
		return 0, err
	}
	return f(n, w, x), nil
}

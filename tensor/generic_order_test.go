package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Straightforward Go transcriptions of llama.cpp's scalar ggml_vec_dot_f32/f16 (vec.cpp),
// loop for loop, for the kernels of generic_order.go to be checked against bit for bit.

func refGenericF32(n int, w, x []byte) float32 {
	var sumf float64 // ggml_float
	for i := range n {
		a := math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
		sumf += float64(float32(a * b))
	}
	return float32(sumf)
}

func refGenericF16(n int, w, x []byte) float32 {
	var sumf float64
	for i := range n {
		a := F16ToF32(binary.LittleEndian.Uint16(w[2*i:]))
		b := F16ToF32(binary.LittleEndian.Uint16(x[2*i:]))
		sumf += float64(float32(a * b))
	}
	return float32(sumf)
}

var genericRefs = map[DType]func(n int, w, x []byte) float32{F32: refGenericF32, F16: refGenericF16}

// widenF16Rows returns the F16 rows of x (n elements, stride xs bytes) as float32 rows
// of 4n bytes: the F16 tile's activations.
func widenF16Rows(x []byte, xs, rows, n int) []byte {
	out := make([]byte, rows*4*n)
	for i := range rows {
		for k := range n {
			f := F16ToF32(binary.LittleEndian.Uint16(x[i*xs+2*k:]))
			binary.LittleEndian.PutUint32(out[(i*n+k)*4:], math.Float32bits(f))
		}
	}
	return out
}

type genTile = func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)

// genericMismatch runs dot and tile (the kernels under test for type typ) against ref
// over random rows and tile shapes and returns the first mismatch's description, or "".
func genericMismatch(typ DType, dot func(n int, w, x []byte) float32, tile genTile, ref func(n int, w, x []byte) float32) string {
	r := rand.New(rand.NewPCG(13, uint64(typ)))
	for trial := range 40 {
		n := 1 + r.IntN(300)
		mw, mx := 1+r.IntN(11), 1+r.IntN(9)
		if trial%5 == 0 {
			mx = 1
		}
		wrb, xrb := typ.RowBytes(n), typ.VecDotType().RowBytes(n)
		ws, xs := wrb+r.IntN(3)*typ.BlockBytes(), xrb
		w := make([]byte, mw*ws)
		for o := range mw {
			copy(w[o*ws:], randomRow(r, typ, n, false))
		}
		x := make([]byte, mx*xs)
		for i := range mx {
			copy(x[i*xs:], randomRow(r, typ.VecDotType(), n, false))
		}
		want := make([]float32, mx*mw)
		for i := range mx {
			for o := range mw {
				want[i*mw+o] = ref(n, w[o*ws:o*ws+wrb], x[i*xs:i*xs+xrb])
				if got := dot(n, w[o*ws:o*ws+wrb], x[i*xs:i*xs+xrb]); math.Float32bits(got) != math.Float32bits(want[i*mw+o]) {
					return fmt.Sprintf("%v dot n=%d o=%d i=%d: got %s, want %s", typ, n, o, i, f32s(got), f32s(want[i*mw+o]))
				}
			}
		}
		tx, txs := x, xs
		if typ == F16 {
			tx, txs = widenF16Rows(x, xs, mx, n), 4*n
		}
		ds := mw + 2
		dst := make([]float32, mx*ds)
		tile(n, w, ws, mw, tx, txs, mx, dst, ds)
		for i := range mx {
			for o := range mw {
				if got := dst[i*ds+o]; math.Float32bits(got) != math.Float32bits(want[i*mw+o]) {
					return fmt.Sprintf("%v tile n=%d %dx%d o=%d i=%d: got %s, want %s", typ, n, mw, mx, o, i, f32s(got), f32s(want[i*mw+o]))
				}
			}
		}
	}
	return ""
}

func f32s(v float32) string { return fmt.Sprintf("%g (%#08x)", v, math.Float32bits(v)) }

// TestGenericOrderMatchesReference checks GenericDotFunc and GenericDotTileFunc bit for
// bit against the transcriptions of llama.cpp's generic vec_dots.
func TestGenericOrderMatchesReference(t *testing.T) {
	for typ, ref := range genericRefs {
		dot, tile := GenericDotFunc(typ), GenericDotTileFunc(typ)
		if dot == nil || tile == nil {
			t.Fatalf("%v: no generic kernel", typ)
		}
		if m := genericMismatch(typ, dot, tile, ref); m != "" {
			t.Error(m)
		}
	}
	if GenericDotFunc(Q8_0) != nil || GenericDotTileFunc(Q4_0) != nil {
		t.Error("generic kernels for types that have none")
	}
}

// TestGenericOrderCatchesBrokenKernels checks that genericMismatch fails kernels in
// another float order: a dot and tiles summing in float32 (F16's products, of two 11-bit
// significands, are exact in float32 in any order, so only the sum can tell).
func TestGenericOrderCatchesBrokenKernels(t *testing.T) {
	f32sum := func(n int, w, x []byte) float32 {
		var s float32
		a, b := Float32s(w)[:n], Float32s(x)[:n]
		for i := range a {
			s += float32(a[i] * b[i])
		}
		return s
	}
	f32sumTile := func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		dotTileBy(f32sum, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
	f16sumTile := func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		for i := range mx {
			xr := Float32s(x[i*xStride:])[:n]
			for o := range mw {
				var s float32
				for k := range n {
					s += float32(F16ToF32(binary.LittleEndian.Uint16(w[o*wStride+2*k:])) * xr[k])
				}
				dst[i*dstStride+o] = s
			}
		}
	}
	broken := []struct {
		name string
		typ  DType
		dot  func(n int, w, x []byte) float32
		tile genTile
	}{
		{"float32 F32 sum", F32, f32sum, genTileF32},
		{"float32 F32 tile sum", F32, dotF32Generic, f32sumTile},
		{"float32 F16 tile sum", F16, dotF16Generic, f16sumTile},
	}
	for _, b := range broken {
		if genericMismatch(b.typ, b.dot, b.tile, genericRefs[b.typ]) == "" {
			t.Errorf("%s: not caught", b.name)
		}
	}
}

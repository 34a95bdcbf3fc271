package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Straightforward Go transcriptions of llama.cpp's generic vec_dots (ggml-cpu/quants.c
// ggml_vec_dot_*_generic, vec.cpp's scalar ggml_vec_dot_f32/f16), loop for loop, for
// the kernels of generic_order.go to be checked against bit for bit.

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

func refGenericQ8_0(n int, w, x []byte) float32 {
	var sumf float32
	for ib := range n / QK {
		xb, yb := w[ib*q8_0Bytes:], x[ib*q8_0Bytes:]
		sumi := 0
		for j := range QK {
			sumi += int(int8(xb[2+j])) * int(int8(yb[2+j]))
		}
		sumf += float32(float32(sumi) * float32(halfAt(xb)*halfAt(yb)))
	}
	return sumf
}

func refGenericQ4_0(n int, w, x []byte) float32 {
	var sumf float32
	for ib := range n / QK {
		xb, yb := w[ib*q4_0Bytes:], x[ib*q8_0Bytes:]
		sumi0, sumi1 := 0, 0
		for j := range QK / 2 {
			v0 := int(xb[2+j]&0x0F) - 8
			v1 := int(xb[2+j]>>4) - 8
			sumi0 += v0 * int(int8(yb[2+j]))
			sumi1 += v1 * int(int8(yb[2+j+QK/2]))
		}
		sumi := sumi0 + sumi1
		sumf += float32(float32(float32(sumi)*halfAt(xb)) * halfAt(yb))
	}
	return sumf
}

// refQ8K returns the fields of Q8_K block a: d, the quants, the bsums.
func refQ8K(a []byte) (d float32, q [QKK]int8, bsums [16]int) {
	d = math.Float32frombits(binary.LittleEndian.Uint32(a))
	for i := range q {
		q[i] = int8(a[4+i])
	}
	for j := range bsums {
		bsums[j] = int(int16(binary.LittleEndian.Uint16(a[4+QKK+2*j:])))
	}
	return d, q, bsums
}

func refGenericQ4K(n int, w, x []byte) float32 {
	var sums [8]float32
	var sumf float32
	for i := range n / QKK {
		xb, yb := w[i*q4KBytes:], x[i*q8KBytes:]
		yd, q8, bsums := refQ8K(yb)
		var aux8 [QKK]int
		q4 := xb[16:]
		for j := range QKK / 64 {
			for l := range 32 {
				aux8[64*j+l] = int(q4[32*j+l] & 0xF)
				aux8[64*j+32+l] = int(q4[32*j+l] >> 4)
			}
		}
		// the scales and mins as ggml's kmask code unpacks them
		var utmp [4]uint32
		for k := range 3 {
			utmp[k] = binary.LittleEndian.Uint32(xb[4+4*k:])
		}
		const kmask1, kmask2, kmask3 = 0x3f3f3f3f, 0x0f0f0f0f, 0x03030303
		utmp[3] = ((utmp[2] >> 4) & kmask2) | (((utmp[1] >> 6) & kmask3) << 4)
		uaux := utmp[1] & kmask1
		utmp[1] = (utmp[2] & kmask2) | (((utmp[0] >> 6) & kmask3) << 4)
		utmp[2] = uaux
		utmp[0] &= kmask1
		var sb [16]byte
		for k := range 4 {
			binary.LittleEndian.PutUint32(sb[4*k:], utmp[k])
		}
		scales, mins := sb[0:8], sb[8:16]
		sumi := 0
		for j := range QKK / 16 {
			sumi += bsums[j] * int(mins[j/2])
		}
		var aux32 [8]int32
		for j := range QKK / 32 {
			scale := int32(scales[j])
			for e := 32 * j; e < 32*j+32; e++ {
				aux32[e%8] += scale * int32(int16(int(q8[e])*aux8[e]))
			}
		}
		d := float32(halfAt(xb) * yd)
		for l := range 8 {
			sums[l] += float32(d * float32(aux32[l]))
		}
		dmin := float32(halfAt(xb[2:]) * yd)
		sumf -= float32(dmin * float32(sumi))
	}
	for l := range 8 {
		sumf += sums[l]
	}
	return sumf
}

func refGenericQ6K(n int, w, x []byte) float32 {
	var sums [8]float32
	var sumf float32
	for i := range n / QKK {
		xb, yb := w[i*q6KBytes:], x[i*q8KBytes:]
		yd, q8, _ := refQ8K(yb)
		var aux8 [QKK]int8
		for h := range 2 {
			q4, qh, a := xb[64*h:], xb[128+32*h:], aux8[128*h:]
			for l := range 32 {
				a[l] = int8((q4[l]&0xF)|((qh[l]>>0)&3)<<4) - 32
				a[l+32] = int8((q4[l+32]&0xF)|((qh[l]>>2)&3)<<4) - 32
				a[l+64] = int8((q4[l]>>4)|((qh[l]>>4)&3)<<4) - 32
				a[l+96] = int8((q4[l+32]>>4)|((qh[l]>>6)&3)<<4) - 32
			}
		}
		var aux32 [8]int32
		for j := range QKK / 16 {
			scale := int32(int8(xb[192+j]))
			for e := 16 * j; e < 16*j+16; e++ {
				aux32[e%8] += scale * int32(int16(int(q8[e])*int(aux8[e])))
			}
		}
		d := float32(halfAt(xb[208:]) * yd)
		for l := range 8 {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	for l := range 8 {
		sumf += sums[l]
	}
	return sumf
}

var genericRefs = map[DType]func(n int, w, x []byte) float32{
	F32: refGenericF32, F16: refGenericF16, Q8_0: refGenericQ8_0, Q4_0: refGenericQ4_0,
	Q4_K: refGenericQ4K, Q6_K: refGenericQ6K,
}

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
	bs := typ.BlockSize()
	for trial := range 40 {
		n := bs * (1 + r.IntN(12))
		if typ == F32 || typ == F16 {
			n = 1 + r.IntN(300)
		}
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
		if trial%3 == 0 && (typ == Q4_0 || typ == Q8_0) {
			extremeBlocks(r, typ, n, w, ws, mw, x, xs, mx)
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

// extremeBlocks makes about half the blocks of the Q4_0 or Q8_0 weight rows all one
// extreme level and the activation quants near -128: integer sums of 15 bits,
// whose products with a scale round in float32 (random quants give sums of about 11
// bits, where Q4_0's (sumi*dw)*dx and Q8_0's sumi*(dw*dx) are both exact).
func extremeBlocks(r *rand.Rand, typ DType, n int, w []byte, ws, mw int, x []byte, xs, mx int) {
	bb := typ.BlockBytes()
	for b := range n / QK {
		if r.IntN(2) == 0 {
			continue
		}
		for o := range mw {
			q := w[o*ws+b*bb+2 : o*ws+(b+1)*bb]
			for k := range q {
				if typ == Q4_0 {
					q[k] = 0xFF // level 7: sums of 15 significant bits (-8 would give multiples of 8)
				} else {
					q[k] = 0x80 | byte(r.IntN(16))
				}
			}
		}
		for i := range mx {
			q := x[i*xs+b*q8_0Bytes+2 : i*xs+(b+1)*q8_0Bytes]
			for k := range q {
				q[k] = 0x80 | byte(r.IntN(16))
			}
		}
	}
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
	if GenericDotFunc(Q5_K) != nil || GenericDotTileFunc(Q2_K) != nil {
		t.Error("generic kernels for types that have none")
	}
}

// TestGenericOrderCatchesBrokenKernels checks that genericMismatch fails kernels in
// another float order: the x86 order's tile, a float32 F32 sum, a Q4_0 kernel taking
// Q8_0's expression, a k-quant kernel adding the lanes in another order.
func TestGenericOrderCatchesBrokenKernels(t *testing.T) {
	f32sum := func(n int, w, x []byte) float32 {
		var s float32
		a, b := Float32s(w)[:n], Float32s(x)[:n]
		for i := range a {
			s += float32(a[i] * b[i])
		}
		return s
	}
	q4as8 := func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		nb := n / QK
		c := make([]byte, mw*nb*q8_0Bytes)
		for o := range mw {
			for b := range nb {
				q4_0AsQ8(c[(o*nb+b)*q8_0Bytes:], w[o*wStride+b*q4_0Bytes:])
			}
		}
		genTileQ8Form(false, n, c, nb*q8_0Bytes, mw, x, xStride, mx, dst, dstStride)
	}
	revLanes := func(n int, w, x []byte) float32 {
		var s float32
		for i := range n / QKK {
			a := (*[q8KBytes]byte)(x[i*q8KBytes:])
			var k kDecoded
			decodeQ6K((*[q6KBytes]byte)(w[i*q6KBytes:]), &k)
			l := genLanes(&k, (*[QKK]byte)(a[q8KQs:]))
			var sum int32
			for _, v := range l {
				sum += v
			}
			s += float32(float32(halfAt(w[i*q6KBytes+q6KD:])*q8KScale(a)) * float32(sum))
		}
		return s
	}
	broken := []struct {
		name string
		typ  DType
		dot  func(n int, w, x []byte) float32
		tile genTile
	}{
		{"x86 Q8_0 tile", Q8_0, dotQ8_0Go, dotQ8_0x86TileGo},
		{"float32 F32 sum", F32, f32sum, genTileF32},
		{"Q4_0 with Q8_0's expression", Q4_0, dotQ4_0Go, q4as8},
		{"Q6_K one integer sum", Q6_K, revLanes, genTileQ6K},
		{"Q4_K in dotQ4KGo's order", Q4_K, dotQ4KGo, genTileQ4K},
	}
	for _, b := range broken {
		if genericMismatch(b.typ, b.dot, b.tile, genericRefs[b.typ]) == "" {
			t.Errorf("%s: not caught", b.name)
		}
	}
}

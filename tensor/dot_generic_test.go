package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// genericDot transcribes llama.cpp's scalar ggml_vec_dot_*_generic loops element by
// element, without any of the unrolling or word tricks of the fast versions; the fast
// versions must give the same bits.
func genericDot(t DType, n int, w, x []byte) float32 {
	wb, xb := t.BlockBytes(), t.VecDotType().BlockBytes()
	var sumf float32
	for ib := 0; ib < n/QK; ib++ {
		bw, bx := w[ib*wb:][:wb], x[ib*xb:][:xb]
		dw, dx := halfAt(bw), halfAt(bx)
		var qw [QK]int32
		var qs []byte
		switch t {
		case Q4_0, Q4_1:
			qs = bw[wb-QK/2:]
		case Q5_0, Q5_1:
			qs = bw[wb-QK/2:]
			qh := binary.LittleEndian.Uint32(bw[wb-QK/2-4:])
			for j := range QK {
				qw[j] = int32(qh>>j&1) << 4
			}
		case Q8_0:
			for j := range QK {
				qw[j] = int32(int8(bw[2+j]))
			}
		}
		for j := range qs {
			qw[j] |= int32(qs[j] & 0x0F)
			qw[j+QK/2] |= int32(qs[j] >> 4)
		}
		var sumi int32
		for j := range QK {
			v := qw[j]
			switch t {
			case Q4_0:
				v -= 8
			case Q5_0:
				v -= 16
			}
			sumi += v * int32(int8(bx[xb-QK+j]))
		}
		switch t {
		case Q4_0:
			sumf += float32(float32(float32(sumi)*dw) * dx)
		case Q5_0:
			sumf += float32(float32(dw*dx) * float32(sumi))
		case Q8_0:
			sumf += float32(float32(sumi) * float32(dw*dx))
		case Q4_1, Q5_1:
			sumf += float32(float32(dw*dx)*float32(sumi)) + float32(halfAt(bw[2:])*halfAt(bx[2:]))
		}
	}
	return sumf
}

func TestDotBitExactGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 1024
	row := func(scale, off float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64()*scale + off)
		}
		return x
	}
	for _, typ := range []DType{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0} {
		for trial := range 20 {
			w := make([]byte, typ.RowBytes(n))
			x := make([]byte, typ.VecDotType().RowBytes(n))
			if err := Quantize(typ, w, row(1, float64(trial%3)-1)); err != nil {
				t.Fatal(err)
			}
			if err := Quantize(typ.VecDotType(), x, row(2, 0.1)); err != nil {
				t.Fatal(err)
			}
			got, err := Dot(typ, n, w, x)
			if err != nil {
				t.Fatal(err)
			}
			if want := genericDot(typ, n, w, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v trial %d: Dot = %.9g, generic loop %.9g", typ, trial, got, want)
			}
		}
	}
}

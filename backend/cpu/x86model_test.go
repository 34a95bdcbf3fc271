package cpu

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// The plain-Go models below of llama.cpp's x86 path (AVX2 quantize_row_q8_0/q8_1 and
// ggml_vec_dot_q{8,5}_0_q8_0) are the oracles the tensor package's kernels, which
// MatMul uses, are checked against.

const q8Lanes = 8 // float32 lanes of an AVX2 register

// refQuantizeQ8x86 is quantize_row_q8_0 (withSum false) or quantize_row_q8_1 (AVX2):
// d = amax/127, q = round-half-even(x·(127/amax)), for Q8_1 s = d·Σq, both as F16.
func refQuantizeQ8x86(dst []byte, src []float32, bb int, withSum bool) {
	for ib := 0; ib < len(src)/tensor.QK; ib++ {
		x := src[ib*tensor.QK : (ib+1)*tensor.QK]
		b := dst[ib*bb : (ib+1)*bb]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		binary.LittleEndian.PutUint16(b, tensor.F32ToF16(d))
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		qs := b[bb-tensor.QK:]
		var sum int32
		for j, v := range x {
			q := int32(math.RoundToEven(float64(v * id)))
			qs[j] = byte(int8(q))
			sum += q
		}
		if withSum {
			binary.LittleEndian.PutUint16(b[2:], tensor.F32ToF16(d*float32(sum)))
		}
	}
}

// refLanesDot accumulates one block into the eight lanes: lane l gets
// fma(scale, Σ_{k<4} w[4l+k]·x[4l+k], lane).
func refLanesDot(acc *[q8Lanes]float32, scale float32, w *[tensor.QK]int8, x *[tensor.QK]byte) {
	for l := range acc {
		k := l * 4
		s := int32(w[k])*int32(int8(x[k])) + int32(w[k+1])*int32(int8(x[k+1])) +
			int32(w[k+2])*int32(int8(x[k+2])) + int32(w[k+3])*int32(int8(x[k+3]))
		acc[l] = fma32(scale, float32(s), acc[l])
	}
}

// refHsum8 is hsum_float_8: (l+4) pairs, then (0+2)+(1+3).
func refHsum8(acc *[q8Lanes]float32) float32 {
	var t [4]float32
	for i := range t {
		t[i] = acc[i+4] + acc[i]
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

func refHalf(b []byte) float32 { return tensor.F16ToF32(binary.LittleEndian.Uint16(b)) }

// refDotQ8_0x86 is ggml_vec_dot_q8_0_q8_0 (AVX2).
func refDotQ8_0x86(n int, w, x []byte) float32 {
	var acc [q8Lanes]float32
	for ib := 0; ib < n/tensor.QK; ib++ {
		wb, xb := (*[34]byte)(w[ib*34:]), (*[34]byte)(x[ib*34:])
		refLanesDot(&acc, refHalf(wb[:])*refHalf(xb[:]), (*[tensor.QK]int8)(unsafe.Pointer(&wb[2])), (*[tensor.QK]byte)(xb[2:]))
	}
	return refHsum8(&acc)
}

// refDotQ5_0x86 is ggml_vec_dot_q5_0_q8_0 (AVX2).
func refDotQ5_0x86(n int, w, x []byte) float32 {
	var acc [q8Lanes]float32
	var q [tensor.QK]int8
	for ib := 0; ib < n/tensor.QK; ib++ {
		wb, xb := (*[22]byte)(w[ib*22:]), (*[34]byte)(x[ib*34:])
		qh := binary.LittleEndian.Uint32(wb[2:])
		for j := range tensor.QK / 2 {
			q[j] = int8(wb[6+j]&15|byte(qh>>j&1)<<4) - 16
			q[j+16] = int8(wb[6+j]>>4|byte(qh>>(j+16)&1)<<4) - 16
		}
		refLanesDot(&acc, refHalf(wb[:])*refHalf(xb[:]), &q, (*[tensor.QK]byte)(xb[2:]))
	}
	return refHsum8(&acc)
}

// TestQuantizeQ8x86 checks the activation quantizer MatMul uses (tensor's) against the
// plain-Go model, byte for byte, and against the reference quantizer: the same scale,
// quants at most one step apart, and the case where they must differ.
func TestQuantizeQ8x86(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		x := make([]float32, tensor.QK*(1+r.IntN(130)))
		s := math.Ldexp(1, r.IntN(30)-15)
		for i := range x {
			x[i] = float32(r.NormFloat64() * s)
			if trial%4 == 0 { // scale 1 with halves: ties
				x[i] = float32(r.IntN(255)-127) + float32(r.IntN(2))*0.5
			}
		}
		for _, qt := range []tensor.DType{tensor.Q8_0, tensor.Q8_1} {
			got, model, want := make([]byte, qt.RowBytes(len(x))), make([]byte, qt.RowBytes(len(x))), make([]byte, qt.RowBytes(len(x)))
			if err := tensor.QuantizeActivations(qt, got, x); err != nil {
				t.Fatal(err)
			}
			refQuantizeQ8x86(model, x, qt.BlockBytes(), qt == tensor.Q8_1)
			if !bytes.Equal(got, model) {
				t.Fatalf("%v trial %d: tensor.QuantizeActivations differs from the x86 model", qt, trial)
			}
			if err := tensor.Quantize(qt, want, x); err != nil {
				t.Fatal(err)
			}
			bb, off := qt.BlockBytes(), qt.BlockBytes()-tensor.QK
			for b := 0; b < len(x)/tensor.QK; b++ {
				g, w := got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb]
				if g[0] != w[0] || g[1] != w[1] {
					t.Fatalf("%v block %d: scale %x, reference %x", qt, b, g[:2], w[:2])
				}
				for j := 0; j < tensor.QK; j++ {
					if d := int(int8(g[off+j])) - int(int8(w[off+j])); d < -1 || d > 1 {
						t.Fatalf("%v block %d quant %d: %d, reference %d", qt, b, j, int8(g[off+j]), int8(w[off+j]))
					}
				}
			}
		}
	}
	// amax 127 makes the scale 1: 2.5 rounds to even (2) here, away from zero (3) in the
	// reference quantizer.
	block := make([]float32, tensor.QK)
	block[0], block[1] = 127, 2.5
	got, want := make([]byte, 34), make([]byte, 34)
	if err := tensor.QuantizeActivations(tensor.Q8_0, got, block); err != nil {
		t.Fatal(err)
	}
	if err := tensor.Quantize(tensor.Q8_0, want, block); err != nil {
		t.Fatal(err)
	}
	if got[3] != 2 || want[3] != 3 {
		t.Errorf("2.5 with scale 1: x86 %d (want 2), reference %d (want 3)", got[3], want[3])
	}
}

// TestDotsX86 checks the Q8_0 and Q5_0 dots MatMul uses (mulMatDot) bit for bit against the x86 models, and against tensor.Dot, which adds the same
// integers in another order.
func TestDotsX86(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := tensor.QK * (1 + r.IntN(200))
		w, x := make([]float32, n), make([]float32, n)
		for i := range w {
			w[i], x[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		xq := make([]byte, tensor.Q8_0.RowBytes(n))
		if err := tensor.QuantizeActivations(tensor.Q8_0, xq, x); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			wt    tensor.DType
			model func(int, []byte, []byte) float32
		}{{tensor.Q8_0, refDotQ8_0x86}, {tensor.Q5_0, refDotQ5_0x86}} {
			wq := make([]byte, tt.wt.RowBytes(n))
			if err := tensor.Quantize(tt.wt, wq, w); err != nil {
				t.Fatal(err)
			}
			dot, err := mulMatDot(tt.wt, 1+trial%3, n, 32)
			if err != nil {
				t.Fatal(err)
			}
			got, model := dot(n, wq, xq), tt.model(n, wq, xq)
			if math.Float32bits(got) != math.Float32bits(model) {
				t.Fatalf("%v n=%d: %.9g, x86 model %.9g", tt.wt, n, got, model)
			}
			want, err := tensor.Dot(tt.wt, n, wq, xq)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(got-want)) > 1e-5*math.Abs(float64(want))+1e-6*float64(n) { // float32 rounding of n terms of size ~1
				t.Errorf("%v: %g, tensor.Dot %g", tt.wt, got, want)
			}
		}
	}
}

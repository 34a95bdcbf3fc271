package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// x86OrderCases are the dots of x86repack.go: the dispatched function (assembly where
// there is a kernel), its Go code, and the weight type.
func x86OrderCases() []struct {
	name      string
	typ       DType
	fast, go_ func(n int, w, x []byte) float32
} {
	return []struct {
		name      string
		typ       DType
		fast, go_ func(n int, w, x []byte) float32
	}{
		{"Q4_0 vec_dot", Q4_0, dotQ4_0x86, dotQ4_0x86Go},
		{"Q4_0 repack", Q4_0, dotQ4_0Repack, dotQ4_0RepackGo},
		{"Q4_1 vec_dot", Q4_1, dotQ4_1x86, dotQ4_1x86Go},
		{"Q5_1 vec_dot", Q5_1, nil, dotQ5_1x86Go}, // no kernel: only DotFunc's sum is checked
		{"Q4_K gemv", Q4_K, dotQ4KRepack, dotQ4KRepackGo},
		{"Q4_K gemm", Q4_K, dotQ4KRepackGemm, dotQ4KRepackGemmGo},
		{"Q5_K vec_dot", Q5_K, dotQ5Kx86, dotQ5Kx86Go},
		{"Q6_K vec_dot", Q6_K, dotQ6Kx86, dotQ6Kx86Go},
	}
}

// TestX86RepackOrders: every dot of x86repack.go gives its Go code's bits (the amd64
// kernels included, also for quant bytes at their extremes) and the sum DotFunc
// computes, up to float32 rounding.
func TestX86RepackOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(301, 302))
	for _, c := range x86OrderCases() {
		ref, _ := DotFunc(c.typ)
		bs := c.typ.BlockSize()
		for _, nb := range []int{0, 1, 2, 3, 8, 17, 128} {
			n := nb * bs
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				for trial := range 20 {
					w, x := make([]byte, c.typ.RowBytes(n)), make([]byte, c.typ.VecDotType().RowBytes(n))
					f32 := make([]float32, n)
					for i := range f32 {
						f32[i] = float32(r.NormFloat64())
					}
					if err := Quantize(c.typ, w, f32); err != nil {
						t.Fatal(err)
					}
					if trial%4 == 3 { // extreme activations: every quant ±127
						for i := range f32 {
							f32[i] = float32(1 - 2*(i&1))
						}
					}
					if err := QuantizeActivations(c.typ.VecDotType(), x, f32); err != nil {
						t.Fatal(err)
					}
					got := c.go_(n, w, x)
					if c.fast != nil {
						if f := c.fast(n, w, x); math.Float32bits(f) != math.Float32bits(got) {
							t.Fatalf("trial %d: %.9g, Go %.9g", trial, f, got)
						}
					}
					g := ref(n, w, x)
					if math.Abs(float64(got-g)) > 1e-5*(1+math.Abs(float64(g)))+1e-6*float64(n) {
						t.Errorf("trial %d: %.9g, DotFunc %.9g", trial, got, g)
					}
				}
			})
		}
	}
}

// TestX86RepackKernelBytes: the Q4_0 kernels against their Go code on random bytes
// (every nibble and every int8 quant, -128 included) with finite scales.
func TestX86RepackKernelBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(303, 304))
	for _, c := range x86OrderCases()[:2] {
		for range 500 {
			nb := 1 + r.IntN(40)
			w, x := make([]byte, nb*q4_0Bytes), make([]byte, nb*q8_0Bytes)
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for i := range x {
				x[i] = byte(r.Uint32())
			}
			for ib := range nb { // scales: finite halves of either sign, subnormals included
				h := uint16(r.Uint32()) &^ 0x7c00
				h |= uint16(r.IntN(31)) << 10
				w[ib*q4_0Bytes], w[ib*q4_0Bytes+1] = byte(h), byte(h>>8)
				h = uint16(r.Uint32()) &^ 0x7c00
				h |= uint16(r.IntN(31)) << 10
				x[ib*q8_0Bytes], x[ib*q8_0Bytes+1] = byte(h), byte(h>>8)
			}
			n := nb * QK
			if got, want := c.fast(n, w, x), c.go_(n, w, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s nb=%d: %.9g, Go %.9g", c.name, nb, got, want)
			}
		}
	}
}

// TestX86RepackFuncs: the repacked orders exist for Q4_0 and Q4_K only, the gemv and
// gemm forms of Q4_0 are one function, and the x86 vec_dot orders cover Q4_0, Q4_1,
// Q5_K and Q6_K (Q5_1's is kept unwired, see X86DotFunc).
func TestX86RepackFuncs(t *testing.T) {
	for _, typ := range []DType{Q4_0, Q4_K} {
		if X86RepackDotFunc(typ) == nil || X86RepackGemmDotFunc(typ) == nil {
			t.Errorf("%v: no repacked dot", typ)
		}
	}
	for _, typ := range []DType{F32, F16, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q5_K, Q6_K, Q8_K, DType(99)} {
		if X86RepackDotFunc(typ) != nil || X86RepackGemmDotFunc(typ) != nil {
			t.Errorf("%v: has a repacked dot", typ)
		}
	}
	for _, typ := range []DType{Q4_0, Q4_1, Q5_K, Q6_K} {
		if X86DotFunc(typ) == nil || X86DotTileFunc(typ) == nil {
			t.Errorf("%v: no x86-order dot", typ)
		}
	}
}

// TestX86RepackOrderOneBlock pins the float order on one block, where every form is a
// single rounding of an exact value: fma(Σ, d, 0) for the repacked Q4_0, and for the
// lanes, hsum_float_8 of the eight products.
func TestX86RepackOrderOneBlock(t *testing.T) {
	w, x := make([]byte, q4_0Bytes), make([]byte, q8_0Bytes)
	putHalfX86(w, 0.0123)
	putHalfX86(x, 0.0456)
	for i := 2; i < q4_0Bytes; i++ {
		w[i] = byte(17 * i)
	}
	for i := 2; i < q8_0Bytes; i++ {
		x[i] = byte(int8(5*i - 90))
	}
	q := unpack4((*[QK / 2]byte)(w[2:]), 8)
	d := halfAt(w) * halfAt(x)
	if got, want := dotQ4_0Repack(QK, w, x), float32(blockSum(&q, (*[QK]byte)(x[2:])))*d; got != want {
		t.Errorf("repack: %.9g, want %.9g", got, want)
	}
	s := lanes8Sums(&q, (*[QK]byte)(x[2:]))
	var acc [lanes8]float32
	for l := range acc {
		acc[l] = d * float32(s[l])
	}
	if got, want := dotQ4_0x86(QK, w, x), hsum8(&acc); got != want {
		t.Errorf("lanes: %.9g, want %.9g", got, want)
	}
}

// unpack4 returns the 32 nibbles of a Q4_0/Q4_1 block in element order, minus off.
func unpack4(qs *[QK / 2]byte, off int32) (q [QK]int32) {
	for j, b := range qs {
		q[j] = int32(b&0x0F) - off
		q[j+QK/2] = int32(b>>4) - off
	}
	return q
}

// blockSum is the exact sum Σ q[k]·x[k] of one block.
func blockSum(q *[QK]int32, x *[QK]byte) int32 {
	var s int32
	for k := range q {
		s += q[k] * int32(int8(x[k]))
	}
	return s
}

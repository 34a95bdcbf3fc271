package tensor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestActivationQuantizersMatchGo: the AVX2 quantizers give the bytes of the Go code.
func TestActivationQuantizersMatchGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2/F16C")
	}
	r := rand.New(rand.NewPCG(71, 72))
	for _, q := range []struct {
		typ  DType
		asm  func(dst *byte, src *float32, nb int)
		slow func(dst []byte, src []float32)
	}{{Q8_0, quantizeQ8_0x86AVX2, quantizeQ8_0x86Go}, {Q8_1, quantizeQ8_1x86AVX2, quantizeQ8_1x86Go}} {
		for trial := range 300 {
			n := QK * (1 + r.IntN(160))
			x := randActivations(r, n)
			if trial%10 == 9 { // Inf and NaN
				x[r.IntN(n)] = float32(math.Inf(1 - 2*r.IntN(2)))
				x[r.IntN(n)] = float32(math.NaN())
			}
			got, want := make([]byte, q.typ.RowBytes(n)), make([]byte, q.typ.RowBytes(n))
			q.asm(&got[0], &x[0], n/QK)
			q.slow(want, x)
			if !bytes.Equal(got, want) {
				bb := q.typ.BlockBytes()
				for b := 0; b < n/QK; b++ {
					if !bytes.Equal(got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb]) {
						t.Fatalf("%v trial %d block %d of %v:\nasm % x\nGo  % x", q.typ, trial, b, x[b*QK:(b+1)*QK], got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb])
					}
				}
			}
		}
	}
}

// TestX86DotKernels: every x86-order kernel this machine can run gives the bits of the
// Go code, on random bytes (-128 quants included) and on quantized rows.
func TestX86DotKernels(t *testing.T) {
	type kernel struct {
		name string
		typ  DType
		ok   bool
		f    func(w, x *byte, nb int) float32
		slow func(n int, w, x []byte) float32
	}
	kernels := []kernel{
		{"dotQ8_0x86AVX2", Q8_0, hasFMA, dotQ8_0x86AVX2, dotQ8_0x86Go},
		{"dotQ8_0x86VNNI", Q8_0, hasFMA && hasVNNI, dotQ8_0x86VNNI, dotQ8_0x86Go},
		{"dotQ5_0x86AVX2", Q5_0, hasFMA, dotQ5_0x86AVX2, dotQ5_0x86Go},
		{"dotQ5_0x86VNNI", Q5_0, hasFMA && hasVNNI, dotQ5_0x86VNNI, dotQ5_0x86Go},
	}
	r := rand.New(rand.NewPCG(81, 82))
	for _, k := range kernels {
		if !k.ok {
			t.Logf("%s: not supported here", k.name)
			continue
		}
		for _, nb := range []int{1, 2, 3, 7, 8, 9, 64, 128, 130, 344} {
			n := QK * nb
			for trial := range 40 {
				var w, x []byte
				if trial%2 == 0 {
					w, x = randomRow(r, k.typ, n, false), randomRow(r, Q8_0, n, false)
				} else {
					w, x = make([]byte, k.typ.RowBytes(n)), make([]byte, Q8_0.RowBytes(n))
					quantizeOrFatal(t, k.typ, w, randActivations(r, n))
					quantizeQ8_0x86Go(x, randActivations(r, n))
				}
				got, want := k.f(&w[0], &x[0], nb), k.slow(n, w, x)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s, %d blocks, trial %d: %.9g (%#08x), Go %.9g (%#08x)", k.name, nb, trial, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	}
}

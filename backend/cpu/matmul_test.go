package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestMatMulExact checks that every output is bit for bit the dot product llama.cpp's
// CPU mul_mat would use (mulMatDot: tinyBLAS or vec_dot for F32 and F16, the tensor
// package's vec_dot, in the x86 order where it has one, for quantized types; for the
// rows of a batch that the repacked gemm takes, mulMatGemm's dot) of the weight row
// with the activation row converted once to the vec-dot type
// (tensor.QuantizeActivations), for batches of 1, 6 and 9, 28 output rows (tinyBLAS
// takes F32/F16 batches), 29 (it declines) and 32 (llama.cpp repacks Q4_0 and Q4_K),
// and several thread counts.
func TestMatMulExact(t *testing.T) {
	const in = 512
	types := []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0,
		tensor.Q5_1, tensor.Q8_0, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K}
	for _, wt := range types {
		for _, out := range []int{28, 29, 32} {
			t.Run(fmt.Sprintf("%v/out=%d", wt, out), func(t *testing.T) {
				testMatMulExact(t, wt, in, out)
			})
		}
	}
}

func testMatMulExact(t *testing.T, wt tensor.DType, in, out int) {
	r := rand.New(rand.NewPCG(uint64(wt), uint64(out)))
	w := make([]float32, out*in)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	wq := make([]byte, wt.RowBytes(out*in))
	if err := tensor.Quantize(wt, wq, w); err != nil {
		t.Fatalf("quantize: %v", err)
	}
	qt := activationType(wt)
	wrb, xrb := wt.RowBytes(in), qt.RowBytes(in)
	for _, n := range []int{1, 6, 9} {
		x := make([]float32, n*in)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		xq := make([]byte, n*xrb)
		for i := 0; i < n; i++ {
			if err := tensor.QuantizeActivations(qt, xq[i*xrb:(i+1)*xrb], x[i*in:(i+1)*in]); err != nil {
				t.Fatalf("quantize activations: %v", err)
			}
		}
		dot, err := mulMatDot(wt, n, in, out)
		if err != nil {
			t.Fatalf("dot: %v", err)
		}
		gemm := mulMatGemm(wt, out)
		for _, threads := range []int{1, 2, 5} {
			got := runMatMul(t, threads, wt, wq, x, n, in, out)
			for i := 0; i < n; i++ {
				f := dot
				if gemm != nil && i < n-n%tensor.X86RepackGemmRows {
					f = gemm
				}
				for o := 0; o < out; o++ {
					if want := f(in, wq[o*wrb:(o+1)*wrb], xq[i*xrb:(i+1)*xrb]); got[i*out+o] != want {
						t.Fatalf("n=%d threads %d: [%d][%d] = %g, want %g", n, threads, i, o, got[i*out+o], want)
					}
				}
			}
		}
	}
}

func runMatMul(t *testing.T, threads int, wt tensor.DType, wq []byte, x []float32, n, in, out int) []float32 {
	d := New(threads)
	defer d.Close()
	wb, err := d.Wrap(wt, out, in, wq)
	if err != nil {
		t.Fatal(err)
	}
	xb, _ := d.Wrap(tensor.F32, n, in, tensor.Float32Bytes(x))
	dst, _ := d.Alloc(tensor.F32, n, out)
	d.MatMul(dst, wb, xb)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return dst.(*Buffer).f32()
}

// TestMatMulDoesNotAllocate: once the scratch has grown, MatMul allocates nothing, for
// the types with and without an x86-order dot. Not under the race detector: there
// MatMul allocates once in about every other run (on main too: 15 of 30 runs of
// -race -count=30 failed), from the detector's instrumentation.
func TestMatMulDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const in, out, n = 256, 32, 5
	for _, wt := range []tensor.DType{tensor.Q8_0, tensor.Q5_0, tensor.Q4_0, tensor.Q4_K, tensor.F16} {
		d := New(2)
		wq := make([]byte, wt.RowBytes(out*in))
		if err := tensor.Quantize(wt, wq, make([]float32, out*in)); err != nil {
			t.Fatal(err)
		}
		wb, err := d.Wrap(wt, out, in, wq)
		if err != nil {
			t.Fatal(err)
		}
		xb, _ := d.Alloc(tensor.F32, n, in)
		dst, _ := d.Alloc(tensor.F32, n, out)
		d.MatMul(dst, wb, xb)
		if a := testing.AllocsPerRun(20, func() { d.MatMul(dst, wb, xb) }); a != 0 {
			t.Errorf("%v: MatMul allocates %g times", wt, a)
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
}

// TestGenericOrderDispatch checks where MatMul takes llama.cpp's generic order: at the
// portable level, F32 and F16 weights when decoding, nothing else; and that the F32
// decoding dot is then that order's (each product rounded to float32, the sum in
// float64), elsewhere not.
func TestGenericOrderDispatch(t *testing.T) {
	portable := tensor.Level() == tensor.LevelPortable
	for _, c := range []struct {
		wt   tensor.DType
		n    int
		want bool
	}{{tensor.F32, 1, portable}, {tensor.F16, 1, portable}, {tensor.F32, 2, false}, {tensor.F16, 16, false},
		{tensor.Q8_0, 1, false}, {tensor.Q4_0, 1, false}, {tensor.Q4_K, 1, false}, {tensor.Q6_K, 1, false}} {
		if got := genericOrder(c.wt, c.n); got != c.want {
			t.Errorf("genericOrder(%v, %d) = %v, want %v", c.wt, c.n, got, c.want)
		}
	}
	// A row whose float32 sums lose bits that the float64 sum keeps: 1 and 63 terms
	// of 2^-24, half an ulp of 1 (a float32 chain from 1 keeps 1 at each tie).
	const in = 64
	w, x := make([]float32, in), make([]float32, in)
	for i := range w {
		w[i], x[i] = 1, 0x1p-24
	}
	w[0], x[0] = 1, 1
	var s float64
	for i := range w {
		s += float64(w[i] * x[i])
	}
	dot, err := mulMatDot(tensor.F32, 1, in, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := dot(in, tensor.Float32Bytes(w), tensor.Float32Bytes(x))
	if generic := got == float32(s); generic != portable {
		t.Errorf("portable level %v: the decoding F32 dot gives %.9g, the generic order %.9g", portable, got, float32(s))
	}
}

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestMultiMatMulMatchesMatMul: MultiMatMul gives the bits of one MatMul per product,
// for sets of one weight type (q, k, v of a layer: activations converted once) and of
// mixed types (a Q4_K_M layer's Q6_K v; F16 with and without tinyBLAS's row count),
// of row counts that Q4_0 and Q4_K repack (multiples of 8) and that they do not, for
// batches of 1 to 3 rows (one section) and 5 (one MatMul each), on 1 to 3 threads.
func TestMultiMatMulMatchesMatMul(t *testing.T) {
	const in = 256
	for _, set := range [][]struct {
		wt  tensor.DType
		out int
	}{
		{{tensor.Q8_0, 256}, {tensor.Q8_0, 128}, {tensor.Q8_0, 128}},
		{{tensor.Q4_0, 256}, {tensor.Q4_0, 64}, {tensor.Q4_0, 64}},
		{{tensor.Q4_0, 172}, {tensor.Q4_0, 172}, {tensor.Q8_0, 172}},
		{{tensor.Q4_0, 172}, {tensor.Q5_0, 172}, {tensor.Q4_1, 172}},
		{{tensor.Q4_K, 256}, {tensor.Q4_K, 128}, {tensor.Q6_K, 128}},
		{{tensor.F32, 64}, {tensor.F32, 36}, {tensor.F32, 30}},
		{{tensor.F16, 28}, {tensor.F16, 29}, {tensor.Q8_0, 32}},
		{{tensor.BF16, 40}, {tensor.Q5_K, 24}},
	} {
		r := rand.New(rand.NewPCG(uint64(len(set)), uint64(set[0].out)))
		ws := make([][]byte, len(set))
		for i, s := range set {
			w := make([]float32, s.out*in)
			for j := range w {
				w[j] = float32(r.NormFloat64())
			}
			ws[i] = make([]byte, s.wt.RowBytes(s.out*in))
			if err := tensor.Quantize(s.wt, ws[i], w); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range []int{1, 2, 3, 5} {
			x := make([]float32, n*in)
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			for threads := 1; threads <= 3; threads++ {
				name := fmt.Sprintf("%v/n=%d/threads=%d", set, n, threads)
				d := New(threads)
				xb, _ := d.Wrap(tensor.F32, n, in, tensor.Float32Bytes(x))
				p := make([]backend.Product, len(set))
				want := make([][]float32, len(set))
				for i, s := range set {
					w, err := d.Wrap(s.wt, s.out, in, ws[i])
					if err != nil {
						t.Fatal(err)
					}
					p[i].W = w
					p[i].Dst, _ = d.Alloc(tensor.F32, n, s.out)
					want[i] = runMatMul(t, threads, s.wt, ws[i], x, n, in, s.out)
				}
				d.MultiMatMul(xb, p)
				if err := d.Sync(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for i := range set {
					got := p[i].Dst.(*Buffer).f32()
					for j := range got {
						if math.Float32bits(got[j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("%s: product %d [%d] = %g, MatMul gives %g", name, i, j, got[j], want[i][j])
						}
					}
				}
				d.Close()
			}
		}
	}
}

// TestMultiMatMulTaskCoversUnits: a multiMatMulTask's units run, each once, in the
// task of the product they belong to, whatever the ranges the pool cuts them into.
func TestMultiMatMulTaskCoversUnits(t *testing.T) {
	ends := []int{3, 3, 10} // an empty product in the middle
	m := &multiMatMulTask{n: len(ends)}
	copy(m.end[:], ends)
	seen := make([]int, ends[len(ends)-1])
	for _, cut := range [][]int{{0, 10}, {0, 1, 2, 3, 4, 9, 10}, {0, 5, 10}, {0, 3, 10}} {
		clear(seen)
		for k := 0; k+1 < len(cut); k++ {
			for i := range m.n {
				start := 0
				if i > 0 {
					start = m.end[i-1]
				}
				l, h := m.part(i, cut[k], cut[k+1])
				for u := l; u < h; u++ {
					if start+u >= m.end[i] {
						t.Fatalf("cut %v: unit %d of product %d is past its end %d", cut, u, i, m.end[i])
					}
					seen[start+u]++
				}
			}
		}
		for u, c := range seen {
			if c != 1 {
				t.Fatalf("cut %v: unit %d ran %d times", cut, u, c)
			}
		}
	}
}

// TestMultiMatMulDoesNotAllocate: once the scratch has grown, MultiMatMul allocates
// nothing (not measured under the race detector, whose instrumentation allocates in
// MatMul's mat-vecs too).
func TestMultiMatMulDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const in = 256
	for _, wt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.F32} {
		d := New(2)
		p := make([]backend.Product, 3)
		for i := range p {
			wq := make([]byte, wt.RowBytes(64*in))
			if err := tensor.Quantize(wt, wq, make([]float32, 64*in)); err != nil {
				t.Fatal(err)
			}
			p[i].W, _ = d.Wrap(wt, 64, in, wq)
			p[i].Dst, _ = d.Alloc(tensor.F32, 1, 64)
		}
		xb, _ := d.Alloc(tensor.F32, 1, in)
		d.MultiMatMul(xb, p)
		if a := testing.AllocsPerRun(20, func() { d.MultiMatMul(xb, p) }); a != 0 {
			t.Errorf("%v: MultiMatMul allocates %g times", wt, a)
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
}

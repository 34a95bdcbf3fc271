package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestMatMulQ4_0PanelsConcurrent: goroutines sharing one device multiply by the same
// wrapped Q4_0 matrix at once, from its first use (which packs the panels), and each
// gets the bits of the matrix read in place. Run it with -race: the packing and the
// reads of the panels must be ordered by the device's lock.
func TestMatMulQ4_0PanelsConcurrent(t *testing.T) {
	const in, out, goroutines, calls = 256, 64, 4, 8
	r := rand.New(rand.NewPCG(5, 6))
	wq := randQ4_0(t, r, out, in)
	d := New(2)
	defer d.Close()
	plain, _ := d.Alloc(tensor.Q4_0, out, in)
	if err := d.Upload(plain, wq); err != nil {
		t.Fatal(err)
	}
	xs := make([]backend.Buffer, goroutines)
	want := make([][]float32, goroutines)
	for g := range xs {
		n := 1 + 3*g // decode rows and batches (n ≥ 4 takes the gemm tiles)
		x := make([]float32, n*in)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		xs[g], _ = d.Wrap(tensor.F32, n, in, tensor.Float32Bytes(x))
		dst, _ := d.Alloc(tensor.F32, n, out)
		d.MatMul(dst, plain, xs[g])
		want[g] = slices.Clone(dst.(*Buffer).f32())
	}
	for round := range 4 {
		wrapped, err := d.Wrap(tensor.Q4_0, out, in, slices.Clone(wq))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, goroutines*calls)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dst, _ := d.Alloc(tensor.F32, xs[g].Rows(), out)
				for c := range calls {
					d.MatMul(dst, wrapped, xs[g])
					if got := dst.(*Buffer).f32(); !slices.Equal(got, want[g]) {
						errs <- fmt.Errorf("round %d goroutine %d call %d: differs from the matrix read in place", round, g, c)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if q40PanelTile(wrapped.(*Buffer)) != nil && wrapped.(*Buffer).panels == nil {
			t.Fatalf("level %v has a panel kernel but MatMul did not pack", tensor.Level())
		}
		d.Free(wrapped)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

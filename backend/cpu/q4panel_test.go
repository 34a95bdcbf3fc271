package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestMatMulQ4_0Panels: a wrapped Q4_0 matrix, which MatMul packs into panels where the
// level reads them, gives the bits of the same matrix allocated and uploaded (read in
// place), for a decode row and a batch, on 1 and 2 threads, for a matrix whose copy
// comes from the heap and one large enough to be mapped (weightMem); an Upload into
// the wrapped buffer is seen by the next MatMul (the panels are made again), and Free
// drops the copy.
func TestMatMulQ4_0Panels(t *testing.T) {
	for _, sh := range []struct{ in, out int }{
		{256, 200},   // 25 panels: chunks of the pool end inside the matrix
		{2048, 2048}, // 2.4 MB: above hugePage
	} {
		t.Run(fmt.Sprintf("%dx%d", sh.out, sh.in), func(t *testing.T) { testMatMulQ4_0Panels(t, sh.in, sh.out) })
	}
}

func testMatMulQ4_0Panels(t *testing.T, in, out int) {
	r := rand.New(rand.NewPCG(9, uint64(out)))
	w1, w2 := randQ4_0(t, r, out, in), randQ4_0(t, r, out, in)
	for _, threads := range []int{1, 2} {
		d := New(threads)
		wrapped, err := d.Wrap(tensor.Q4_0, out, in, slices.Clone(w1))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := d.Alloc(tensor.Q4_0, out, in)
		for _, n := range []int{1, 7} {
			x := make([]float32, n*in)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			xb, _ := d.Wrap(tensor.F32, n, in, tensor.Float32Bytes(x))
			got, _ := d.Alloc(tensor.F32, n, out)
			want, _ := d.Alloc(tensor.F32, n, out)
			for _, w := range [][]byte{w1, w2} {
				if err := d.Upload(wrapped, w); err != nil {
					t.Fatal(err)
				}
				if err := d.Upload(plain, w); err != nil {
					t.Fatal(err)
				}
				d.MatMul(got, wrapped, xb)
				d.MatMul(want, plain, xb)
				if err := d.Sync(); err != nil {
					t.Fatal(err)
				}
				g, wnt := got.(*Buffer).f32(), want.(*Buffer).f32()
				for i := range g {
					if g[i] != wnt[i] {
						t.Fatalf("threads %d n %d: [%d] = %g, read in place %g", threads, n, i, g[i], wnt[i])
					}
				}
			}
			if q40PanelTile(wrapped.(*Buffer)) != nil && wrapped.(*Buffer).panels == nil {
				t.Fatalf("level %v has a panel kernel but MatMul did not pack", tensor.Level())
			}
		}
		d.Free(wrapped)
		if wb := wrapped.(*Buffer); wb.panels != nil || wb.mapped != nil {
			t.Fatalf("Free left the panels")
		}
		d.Close()
	}
}

// randQ4_0 returns a Q4_0 matrix of rows × cols normal values from r.
func randQ4_0(t *testing.T, r *rand.Rand, rows, cols int) []byte {
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	wq := make([]byte, tensor.Q4_0.RowBytes(rows*cols))
	if err := tensor.Quantize(tensor.Q4_0, wq, w); err != nil {
		t.Fatal(err)
	}
	return wq
}

// BenchmarkDecodeQ4_0: the mat-vecs of four layers of the 1B shape (n_embd 2048, 8 KV
// heads of 64, n_ff 8192) in Q4_0, one token, on 1 and 2 threads: what bounds decoding on
// a CPU. The weights (137 MB) do not fit in the caches; throughput is weight bytes.
// cpuGB/s is weight bytes per CPU second per thread.
func BenchmarkDecodeQ4_0(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchDecodeQ4_0(b, threads) })
	}
}

func benchDecodeQ4_0(b *testing.B, threads int) {
	const dim, kv, ff, layers = 2048, 512, 8192, 4
	shapes := [][2]int{{dim, dim}, {kv, dim}, {kv, dim}, {dim, dim}, {ff, dim}, {ff, dim}, {dim, ff}}
	d := New(threads)
	defer d.Close()
	r := rand.New(rand.NewPCG(3, 4))
	var ws []backend.Buffer
	var bytes int64
	for range layers {
		for _, s := range shapes {
			wq := make([]byte, s[0]*tensor.Q4_0.RowBytes(s[1]))
			for i := range wq {
				wq[i] = byte(r.Uint32())
			}
			for i := 0; i < len(wq); i += 18 {
				wq[i], wq[i+1] = 0, 0x20 // scale 2^-7
			}
			wb, err := d.Wrap(tensor.Q4_0, s[0], s[1], wq)
			if err != nil {
				b.Fatal(err)
			}
			ws = append(ws, wb)
			bytes += int64(len(wq))
		}
	}
	xs := map[int]backend.Buffer{}
	outs := map[int]backend.Buffer{}
	for _, c := range []int{dim, ff} {
		x := make([]float32, c)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		xs[c], _ = d.Wrap(tensor.F32, 1, c, tensor.Float32Bytes(x))
	}
	for _, o := range []int{dim, kv, ff} {
		outs[o], _ = d.Alloc(tensor.F32, 1, o)
	}
	step := func() {
		for _, w := range ws {
			d.MatMul(outs[w.Rows()], w, xs[w.Cols()])
		}
	}
	step() // packs
	b.SetBytes(bytes)
	t0, n := processTime(), 0
	for b.Loop() {
		step()
		n++
	}
	// Bytes per second of the threads' CPU time: the wall-clock rate of a quiet
	// machine (whose threads all run, spinning when idle), less sensitive to the load
	// of a shared one.
	if cpu := processTime() - t0; cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(n)/(cpu.Seconds()/float64(d.Threads()))/1e9, "cpuGB/s")
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
}

// TestMatMulQ4_0PanelsAfterWrite: after Copy or SetRows writes into a wrapped Q4_0
// matrix that MatMul has packed, the next MatMul multiplies by what was written, as
// with the same writes into an allocated matrix (read in place).
func TestMatMulQ4_0PanelsAfterWrite(t *testing.T) {
	const in, out, n = 256, 64, 5
	r := rand.New(rand.NewPCG(11, 12))
	d := New(2)
	defer d.Close()
	w1 := randQ4_0(t, r, out, in)
	wrapped, err := d.Wrap(tensor.Q4_0, out, in, slices.Clone(w1))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := d.Alloc(tensor.Q4_0, out, in)
	other, _ := d.Alloc(tensor.Q4_0, out, in)
	xv := make([]float32, n*in)
	rowsF32 := make([]float32, 3*in)
	for _, v := range [][]float32{xv, rowsF32} {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
	}
	x, _ := d.Wrap(tensor.F32, n, in, tensor.Float32Bytes(xv))
	src, _ := d.Wrap(tensor.F32, 3, in, tensor.Float32Bytes(rowsF32))
	rows, _ := d.Alloc(tensor.I32, 3, 1) // rows 0, 17, 63
	got, _ := d.Alloc(tensor.F32, n, out)
	want, _ := d.Alloc(tensor.F32, n, out)
	for _, up := range []error{d.Upload(plain, w1), d.Upload(other, randQ4_0(t, r, out, in)), d.Upload(rows, []byte{0, 0, 0, 0, 17, 0, 0, 0, 63, 0, 0, 0})} {
		if up != nil {
			t.Fatal(up)
		}
	}
	for _, write := range []struct {
		name string
		do   func(dst backend.Buffer)
	}{
		{"Copy", func(dst backend.Buffer) { d.Copy(dst, other) }},
		{"SetRows", func(dst backend.Buffer) { d.SetRows(dst, src, rows) }},
	} {
		d.MatMul(got, wrapped, x) // packs (again)
		write.do(wrapped)
		write.do(plain)
		d.MatMul(got, wrapped, x)
		d.MatMul(want, plain, x)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.(*Buffer).f32(), want.(*Buffer).f32()) {
			t.Errorf("after %s: MatMul by the wrapped matrix differs from the allocated one's", write.name)
		}
	}
}

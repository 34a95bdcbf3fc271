//go:build cgo

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// openWG opens device 0 for the wgmma tests, skipping where the kernels cannot run.
func openWG(t *testing.T) *Device {
	t.Helper()
	d := openTest(t)
	if !d.wgOn || d.blas == nil {
		t.Skip("cuda: no wgmma kernels here (compute capability 9.0 with tensor maps only, with cuBLAS loaded)")
	}
	return d
}

// setWG sets the wgmma kernels' pipeline depth (0: the default) and whether gemm takes
// them for every shape they run (on) or for none, once the queued work has drained.
func (d *Device) setWG(stages int, on bool) {
	if err := d.Sync(); err != nil {
		panic(err)
	}
	_ = d.do(func() error {
		d.wgStages, d.blas.tune.noWG, d.blas.tune.allWG = stages, !on, on
		return nil
	})
}

// resetWG gives gemm back its default choice of kernels and pipeline depth.
func (d *Device) resetWG() {
	if err := d.Sync(); err != nil {
		panic(err)
	}
	_ = d.do(func() error {
		d.wgStages, d.blas.tune.noWG, d.blas.tune.allWG = 0, false, false
		return nil
	})
}

// randomBlocks returns rows×cols weights of dt with random bits and sane scales.
func randomBlocks(r *rand.Rand, dt tensor.DType, rows, cols int) []byte {
	raw := make([]byte, dt.RowBytes(cols)*rows)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	fixScales(dt, raw)
	return raw
}

// half rounds v to F16 and back, as the GEMM path's copies do.
func half(v float32) float64 { return float64(tensor.F16ToF32(tensor.F32ToF16(v))) }

// TestWGMMA checks every wgmma kernel (each format, each pipeline depth) through
// MatMul on shapes whose weight rows are no multiple of the 128-row tile and whose batch
// is no multiple of the 128-token tile (16, 17, 130, 257, 512 rows), against the
// float64 product of the CPU-dequantized weights rounded to F16 (the values the kernels
// decode: (q-8)·d rounded once) with the activations rounded to F16: products of F16
// values are exact, so the two differ only by the F32 accumulation, bounded by 3e-5 of
// the sum of the products' magnitudes (a misplaced block, scale or token is off by a
// whole term). It also checks that the dequantization + cuBLAS path it replaces agrees
// to the same bound, and that a MatMul whose cols are no multiple of the stage still
// takes that path.
func TestWGMMA(t *testing.T) {
	d := openWG(t)
	defer d.resetWG()
	type shape struct{ rows, cols, n int }
	shapes := []shape{{128, 256, 16}, {200, 256, 17}, {300, 512, 130}, {1000, 1024, 257}, {136, 4096, 512}}
	for _, dt := range wgTypes {
		for _, s := range shapes {
			r := rand.New(rand.NewPCG(uint64(s.rows), uint64(s.n)))
			raw := randomBlocks(r, dt, s.rows, s.cols)
			x := randoms(r, s.n*s.cols)
			want, bound := wgReference(t, dt, raw, x, s.rows, s.cols, s.n)
			w := devBuf(t, d, dt, s.rows, s.cols, raw)
			xb := devBuf(t, d, tensor.F32, s.n, s.cols, tensor.Float32Bytes(x))
			o := devBuf(t, d, tensor.F32, s.n, s.rows, nil)
			check := func(what string) {
				t.Helper()
				d.MatMul(o, w, xb)
				got := tensor.Float32s(download(t, d, o))
				for i := range want {
					if e := math.Abs(float64(got[i]) - want[i]); !(e <= 3e-5*bound[i]) {
						t.Fatalf("%v %dx%d n=%d %s: dst[%d][%d] = %g, want %g (bound %g)", dt, s.rows, s.cols, s.n, what, i/s.rows, i%s.rows, got[i], want[i], 3e-5*bound[i])
					}
				}
			}
			for _, stages := range wgStageCounts(dt) {
				d.setWG(stages, true)
				if d.wgEntry(d.buffer(w, "w")) == "" {
					t.Fatalf("%v %dx%d: no wgmma kernel with %d stages", dt, s.rows, s.cols, stages)
				}
				check(fmt.Sprintf("wgmma s%d", stages))
			}
			wgAgainstCPU(t, dt, raw, x, s.rows, s.cols, s.n, tensor.Float32s(download(t, d, o)))
			d.setWG(0, false)
			check("dequant+cuBLAS")
			d.setWG(0, true)
			for _, b := range []backend.Buffer{w, xb, o} {
				d.Free(b)
			}
		}
		for _, cols := range []int{160, 384} {
			odd := d.buffer(devBuf(t, d, dt, 64, cols, randomBlocks(rand.New(rand.NewPCG(1, 2)), dt, 64, cols)), "odd")
			if d.wgEntry(odd) != "" {
				t.Errorf("%v: %d columns (no multiple of %d) would take the wgmma kernel", dt, cols, 2*wgStage)
			}
		}
	}
}

// wgAgainstCPU checks got, a wgmma kernel's x (n, cols) · wᵀ for raw weights w (rows,
// cols) of dt, against the CPU backend's MatMul, which multiplies the activations
// quantized to int8 blocks of 32 (dt's VecDotType) where the kernel takes them and the
// weights rounded to F16: the two differ by at most a block step of the CPU's
// quantization per activation times the weight (blockSteps), the two F16 roundings
// (2^-11 of each factor), and the F32 sums (1e-5 of the magnitudes).
func wgAgainstCPU(t *testing.T, dt tensor.DType, raw []byte, x []float32, rows, cols, n int, got []float32) {
	t.Helper()
	want := cpuMatMul(t, mmqCase{dt: dt, rows: rows, cols: cols, n: n}, raw, x)
	wf := make([]float32, rows*cols)
	if err := tensor.Dequantize(dt, wf, raw); err != nil {
		t.Fatal(err)
	}
	step := blockSteps(x, dt.VecDotType().BlockSize())
	for i := range n {
		for o := range rows {
			var quant, mag float64
			for k := range cols {
				wk, xk := math.Abs(float64(wf[o*cols+k])), math.Abs(float64(x[i*cols+k]))
				quant += wk * step[i*cols+k]
				mag += wk * xk
			}
			bound := quant + (0x1p-10+1e-5)*mag
			if e := math.Abs(float64(got[i*rows+o]) - float64(want[i*rows+o])); !(e <= bound) {
				t.Fatalf("%v %dx%d n=%d: [%d][%d] = %g, CPU backend %g (error %.3g > bound %.3g)", dt, rows, cols, n, i, o, got[i*rows+o], want[i*rows+o], e, bound)
			}
		}
	}
}

// wgReference returns x (n, cols) · wᵀ for raw weights w (rows, cols) of dt in float64,
// both rounded to F16 first, and per output the sum of the products' magnitudes.
func wgReference(t *testing.T, dt tensor.DType, raw []byte, x []float32, rows, cols, n int) (want, bound []float64) {
	t.Helper()
	wf := make([]float32, rows*cols)
	if err := tensor.Dequantize(dt, wf, raw); err != nil {
		t.Fatal(err)
	}
	w16, x16 := make([]float64, len(wf)), make([]float64, len(x))
	for i, v := range wf {
		w16[i] = half(v)
	}
	for i, v := range x {
		x16[i] = half(v)
	}
	want, bound = make([]float64, n*rows), make([]float64, n*rows)
	for i := range n {
		xi := x16[i*cols : (i+1)*cols]
		for j := range rows {
			var s, m float64
			for k, wv := range w16[j*cols : (j+1)*cols] {
				s += wv * xi[k]
				m += math.Abs(wv * xi[k])
			}
			want[i*rows+j], bound[i*rows+j] = s, m
		}
	}
	return want, bound
}

// TestWGTiming (with -cuda.profile) times the wgmma kernels against the dequantization
// + cuBLAS path and F16 weights through cuBLAS, per MatMul, on the 7B, 8B and 70B
// prompt shapes.
func TestWGTiming(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openWG(t)
	defer d.resetWG()
	type shape struct{ out, in, n int }
	shapes := []shape{{4096, 4096, 512}, {11008, 4096, 512}, {4096, 11008, 512}, {14336, 4096, 512},
		{8192, 8192, 512}, {28672, 8192, 512}, {4096, 4096, 128}, {4096, 4096, 2048}}
	var tb strings.Builder
	fmt.Fprintf(&tb, "| type | out x in | n | wgmma s3 | s4 | s5 | dequant+cuBLAS | F16 cuBLAS | best TFLOP/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	micros := func(el time.Duration) float64 { return el.Seconds() * 1e6 }
	for _, dt := range wgTypes {
		for _, s := range shapes {
			r := rand.New(rand.NewPCG(3, 4))
			w := devBuf(t, d, dt, s.out, s.in, randomBlocks(r, dt, s.out, s.in))
			wf := devBuf(t, d, tensor.F16, s.out, s.in, randomBlocks(r, tensor.F16, s.out, s.in))
			x := devBuf(t, d, tensor.F32, s.n, s.in, tensor.Float32Bytes(randoms(r, s.n*s.in)))
			y := devBuf(t, d, tensor.F32, s.n, s.out, nil)
			const reps = 10
			run := func(wb backend.Buffer) time.Duration {
				return eagerTime(t, d, func() {
					for range reps {
						d.MatMul(y, wb, x)
					}
				}) / reps
			}
			var cells []string
			var best time.Duration
			for _, stages := range []int{3, 4, 5} {
				if !slices.Contains(wgStageCounts(dt), stages) {
					cells = append(cells, "-")
					continue
				}
				d.setWG(stages, true)
				el := run(w)
				if best == 0 || el < best {
					best = el
				}
				cells = append(cells, fmt.Sprintf("%.1f", micros(el)))
			}
			d.setWG(0, false)
			base := run(w)
			f16 := run(wf)
			d.setWG(0, true)
			fmt.Fprintf(&tb, "| %v | %dx%d | %d | %s | %.1f | %.1f | %.0f |\n", dt, s.out, s.in, s.n, strings.Join(cells, " | "),
				micros(base), micros(f16), 2*float64(s.out)*float64(s.in)*float64(s.n)/best.Seconds()/1e12)
			for _, b := range []backend.Buffer{w, wf, x, y} {
				d.Free(b)
			}
		}
	}
	t.Log("times in us per MatMul (F16 activations reused between calls)\n" + tb.String())
}

// TestWGWins checks which prompt shapes gemm gives the wgmma kernels on a GPU of 132
// SMs (an H100/H200): grids of about one wave, not the wide outputs or small batches.
func TestWGWins(t *testing.T) {
	d := &Device{device: &device{info: Info{SMs: 132}}}
	for _, c := range []struct {
		rows, n int
		want    bool
	}{
		{4096, 512, true},   // 7B q, k, v, o, down: 128 blocks
		{8192, 512, true},   // 70B q, o, down: 256
		{11008, 512, false}, // 7B gate, up: 344
		{14336, 512, false}, // 8B gate, up: 448
		{1024, 512, false},  // 8B and 70B k, v: 32
		{4096, 128, false},  // a short batch: 32
		{4096, 2048, false}, // a long one: 512
		{4096, 400, true},   // 4 token tiles, the last one short
	} {
		w := &Buffer{rows: c.rows, cols: 4096, dt: tensor.Q4_0}
		if got := d.wgWins(w, c.n); got != c.want {
			t.Errorf("%d rows, n=%d: wgWins = %v, want %v", c.rows, c.n, got, c.want)
		}
	}
}

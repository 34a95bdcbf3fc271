//go:build cgo

package cuda

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/backendtest"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/tensor"
)

// mmqTypes are the weight formats with MMQ kernels.
func mmqTypes() []tensor.DType {
	var ts []tensor.DType
	for _, dt := range weightTypes {
		if quantized(dt) {
			ts = append(ts, dt)
		}
	}
	return ts
}

// mmqCase is one product checked: w (rows, cols) of dt times x (n, cols).
type mmqCase struct {
	dt                tensor.DType
	rows, cols, n, bn int
}

// mmqResult is what the device computed for a case: dst, and the int8 activations and
// scales quantize_q8 made of x, which the MMQ kernel read.
type mmqResult struct {
	dst []float32
	xq  []int8
	xd  []float32
}

// runMMQ uploads w and x, quantizes x with quantize_q8 into buffers of its own and
// launches the MMQ kernel of tile c.bn on them, and downloads all three.
func runMMQ(t *testing.T, d *Device, c mmqCase, wq []byte, x []float32) mmqResult {
	t.Helper()
	alloc := func(dt tensor.DType, rows, cols int, raw []byte) *Buffer {
		return d.buffer(devBuf(t, d, dt, rows, cols, raw), "test buffer")
	}
	w := alloc(c.dt, c.rows, c.cols, wq)
	xb := alloc(tensor.F32, c.n, c.cols, tensor.Float32Bytes(x))
	o := alloc(tensor.F32, c.n, c.rows, nil)
	xq := alloc(tensor.F32, 1, c.n*c.cols/4, nil)
	xd := alloc(tensor.F32, 1, c.n*c.cols/32, nil)
	d.enqueue("test mmq", func() error {
		blocks := c.n * c.cols / 32
		a := new(args).ptr(xq.ptr).ptr(xd.ptr).ptr(xb.ptr).u64(uint64(blocks))
		if err := d.launch("quantize_q8", dim3{ceilDiv(blocks, threads/32), 1, 1}, dim3{threads, 1, 1}, a); err != nil {
			return err
		}
		return d.launchMMQ(o, w, c.n, c.bn, xq.ptr, xd.ptr)
	})
	get := func(b *Buffer) []byte {
		raw := make([]byte, b.Bytes())
		if err := d.Download(raw, b); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		return raw
	}
	r := mmqResult{dst: tensor.Float32s(get(o)), xd: tensor.Float32s(get(xd))}
	for _, v := range get(xq) {
		r.xq = append(r.xq, int8(v))
	}
	return r
}

// cpuMatMul is dst = x·wᵀ on the CPU backend.
func cpuMatMul(t *testing.T, c mmqCase, wq []byte, x []float32) []float32 {
	t.Helper()
	cd := cpu.New(2)
	defer cd.Close()
	w, err := cd.Alloc(c.dt, c.rows, c.cols)
	if err != nil {
		t.Fatal(err)
	}
	xb, _ := cd.Alloc(tensor.F32, c.n, c.cols)
	o, _ := cd.Alloc(tensor.F32, c.n, c.rows)
	if err := cd.Upload(w, wq); err != nil {
		t.Fatal(err)
	}
	if err := cd.Upload(xb, tensor.Float32Bytes(x)); err != nil {
		t.Fatal(err)
	}
	cd.MatMul(o, w, xb)
	if err := cd.Sync(); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*c.n*c.rows)
	if err := cd.Download(raw, o); err != nil {
		t.Fatal(err)
	}
	return tensor.Float32s(raw)
}

// blockSteps returns, per element of x (rows of cols), the step of its int8 block of bs
// values, amax/127: a bound on the error of quantizing it (half a step) with slack for
// the rounding of the scale, as backendtest's MatMul bound allows.
func blockSteps(x []float32, bs int) []float64 {
	s := make([]float64, len(x))
	for b := 0; b < len(x); b += bs {
		var amax float64
		for _, v := range x[b : b+bs] {
			amax = math.Max(amax, math.Abs(float64(v)))
		}
		for k := b; k < b+bs; k++ {
			s[k] = amax / 127
		}
	}
	return s
}

// TestMMQ checks every MMQ kernel (each format, each token tile) on shapes whose rows are
// no multiple of the 128-row tile, with cols no multiple of the 128-col stage for the
// 32-element formats, and batches of 1, 2, 3, 17, 33 and 512 rows, two ways:
//
//   - against the float64 product of the CPU-dequantized weights with the int8
//     activations the kernel read (downloaded): each block's integer sum is exact on
//     both sides, so they differ only by float32 rounding, bounded by 1e-5 of the sum
//     of the products' magnitudes;
//   - against the CPU backend's MatMul, which quantizes the activations itself (Q8_0's
//     blocks of 32 with x86 rounding for the 32-element formats, Q8_1 for Q4_1 and
//     Q5_1, Q8_K's blocks of 256 for the k-quants): the two differ by the two
//     quantizations' errors, at most a step of each one's block scale per activation
//     times the weight (blockSteps), plus 1e-5 of the magnitudes.
func TestMMQ(t *testing.T) {
	d := openTestWith(t, 0, Options{MMQ: true})
	for _, dt := range mmqTypes() {
		if !d.has(mmqName(dt, 64)) {
			t.Fatalf("%v: no MMQ kernel loaded", dt)
		}
		shapes := [][2]int{{37, 544}, {300, 256}}
		if dt.BlockSize() == 256 {
			shapes = [][2]int{{37, 768}, {300, 512}}
		}
		for si, sh := range shapes {
			for _, n := range []int{1, 2, 3, 17, 33, 512} {
				if n == 512 && si == 0 {
					continue
				}
				for _, bn := range mmqTiles(dt) {
					if n == 512 && bn == 32 {
						continue
					}
					c := mmqCase{dt: dt, rows: sh[0], cols: sh[1], n: n, bn: bn}
					t.Run(fmt.Sprintf("%v/%dx%d/n=%d/bn=%d", dt, c.rows, c.cols, n, bn), func(t *testing.T) { checkMMQ(t, d, c) })
				}
			}
		}
	}
}

func checkMMQ(t *testing.T, d *Device, c mmqCase) {
	r := rand.New(rand.NewPCG(uint64(c.dt), uint64(c.rows*1000+c.n)))
	w, x := randoms(r, c.rows*c.cols), randoms(r, c.n*c.cols)
	x[3] = 40 // an outlier makes a coarse block scale
	wq := make([]byte, c.dt.RowBytes(c.cols)*c.rows)
	if err := tensor.Quantize(c.dt, wq, w); err != nil {
		t.Fatal(err)
	}
	wd := make([]float32, c.rows*c.cols)
	if err := tensor.Dequantize(c.dt, wd, wq); err != nil {
		t.Fatal(err)
	}
	got := runMMQ(t, d, c, wq, x)
	want := cpuMatMul(t, c, wq, x)
	gpuStep := blockSteps(x, 32)
	cpuStep := blockSteps(x, c.dt.VecDotType().BlockSize())
	for i := 0; i < c.n; i++ {
		for o := 0; o < c.rows; o++ {
			var exact, exactMag, mag, bound float64
			for k := 0; k < c.cols; k++ {
				wk := float64(wd[o*c.cols+k])
				xk := float64(got.xq[i*c.cols+k]) * float64(got.xd[(i*c.cols+k)/32])
				exact += wk * xk
				exactMag += math.Abs(wk * xk)
				mag += math.Abs(wk * float64(x[i*c.cols+k]))
				bound += math.Abs(wk) * (gpuStep[i*c.cols+k] + cpuStep[i*c.cols+k])
			}
			g := float64(got.dst[i*c.rows+o])
			if e := math.Abs(g - exact); !(e <= 1e-5*exactMag) {
				t.Fatalf("[%d][%d] = %g, want %g from the int8 activations (error %.3g > %.3g)", i, o, g, exact, e, 1e-5*exactMag)
			}
			bound += 1e-5 * mag
			if e := math.Abs(g - float64(want[i*c.rows+o])); !(e <= bound) {
				t.Fatalf("[%d][%d] = %g, CPU backend %g (error %.3g > bound %.3g)", i, o, g, want[i*c.rows+o], e, bound)
			}
		}
	}
}

// TestConformanceMMQ runs the backend conformance suite with MatMul on the MMQ kernels
// (Options.MMQ), its batches of 33 rows through them.
func TestConformanceMMQ(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Device {
		return openTestWith(t, 0, Options{MMQ: true})
	})
}

// TestMMQDispatch checks MatMul's use of the MMQ kernels: a batch of 40 rows gives the
// direct launch's bits, and an MMQ MatMul that overwrites the input whose int8 copy the
// cache holds makes the next MatMul of that input quantize it again.
func TestMMQDispatch(t *testing.T) {
	d := openTestWith(t, 0, Options{MMQ: true})
	const n, in = 40, 256
	r := rand.New(rand.NewPCG(31, 32))
	wq := make([]byte, tensor.Q4_0.RowBytes(in)*in)
	if err := tensor.Quantize(tensor.Q4_0, wq, randoms(r, in*in)); err != nil {
		t.Fatal(err)
	}
	x0 := randoms(r, n*in)
	get := func(b backend.Buffer) []byte {
		raw := make([]byte, 4*b.Rows()*b.Cols())
		if err := d.Download(raw, b); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	w := devBuf(t, d, tensor.Q4_0, in, in, wq)
	x, y := devBuf(t, d, tensor.F32, n, in, tensor.Float32Bytes(x0)), devBuf(t, d, tensor.F32, n, in, nil)
	d.MatMul(y, w, x)
	direct := runMMQ(t, d, mmqCase{dt: tensor.Q4_0, rows: in, cols: in, n: n, bn: d.mmqTile(n)}, wq, x0)
	if !bytes.Equal(get(y), tensor.Float32Bytes(direct.dst)) {
		t.Fatal("MatMul of 40 rows differs from the MMQ kernel launched directly")
	}
	d.MatMul(y, w, x) // the int8 cache holds x
	d.MatMul(x, w, x) // in place: reads the cached int8 x, then overwrites x
	d.MatMul(y, w, x) // must quantize the new x
	fresh := devBuf(t, d, tensor.F32, n, in, get(x))
	y2 := devBuf(t, d, tensor.F32, n, in, nil)
	d.MatMul(y2, w, fresh)
	if !bytes.Equal(get(y), get(y2)) {
		t.Fatal("MatMul after an MMQ MatMul wrote its input used the old quantized input")
	}
}

// TestMMQTiming (with -cuda.profile) times the MMQ kernels on llama-7B and 70B
// projections against the path they replace (dequantization to F16 + cuBLAS) and
// cuBLAS on F16 weights, and logs a table.
func TestMMQTiming(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openTestWith(t, 0, Options{MMQ: true})
	d.mmqOn = false // on only while timing the MMQ kernels
	type shape struct{ out, in, n int }
	shapes := []shape{{4096, 4096, 512}, {11008, 4096, 512}, {4096, 11008, 512}, {32000, 4096, 512},
		{8192, 8192, 512}, {28672, 8192, 512}, {8192, 28672, 512}}
	small := []shape{{4096, 4096, 16}, {4096, 4096, 32}, {4096, 4096, 64}, {4096, 4096, 128}, {4096, 4096, 256}, {4096, 4096, 2048}}
	var tb strings.Builder
	fmt.Fprintf(&tb, "| type | out x in | n | MMQ bn=32 | bn=64 | bn=128 | dequant+cuBLAS | F16 cuBLAS | MMQ TFLOP/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	timeOne := func(dt tensor.DType, s shape) {
		r := rand.New(rand.NewPCG(3, 4))
		alloc := func(dt tensor.DType, rows, cols int) backend.Buffer {
			b, err := d.Alloc(dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			raw := make([]byte, dt.RowBytes(cols)*rows)
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			fixScales(dt, raw)
			if dt == tensor.F32 {
				v := tensor.Float32s(raw)
				for i := range v {
					v[i] = float32(i%7) - 3
				}
			}
			if err := d.Upload(b, raw); err != nil {
				t.Fatal(err)
			}
			return b
		}
		w, wf := alloc(dt, s.out, s.in), alloc(tensor.F16, s.out, s.in)
		x, y := alloc(tensor.F32, s.n, s.in), alloc(tensor.F32, s.n, s.out)
		defer func() {
			for _, b := range []backend.Buffer{w, wf, x, y} {
				d.Free(b)
			}
		}()
		const reps = 10
		run := func(wb backend.Buffer) time.Duration {
			// x changes between MatMuls (an Add of zero would not: use the write count)
			return eagerTime(t, d, func() {
				for range reps {
					d.MatMul(y, wb, x)
					d.mu.Lock()
					d.writes++ // each MatMul quantizes x again, as in a model
					d.mu.Unlock()
				}
			}) / reps
		}
		cells := []string{}
		var best time.Duration
		for _, bn := range []int{32, 64, 128} {
			if !d.has(mmqName(dt, bn)) {
				cells = append(cells, "-")
				continue
			}
			d.mmqOn, d.mmqTileSet = true, bn
			el := run(w)
			d.mmqOn, d.mmqTileSet = false, 0
			if best == 0 || el < best {
				best = el
			}
			cells = append(cells, fmt.Sprintf("%.1f", micros(el)))
		}
		base := run(w)
		f16 := run(wf)
		fmt.Fprintf(&tb, "| %v | %dx%d | %d | %s | %.1f | %.1f | %.0f |\n", dt, s.out, s.in, s.n, strings.Join(cells, " | "),
			micros(base), micros(f16), 2*float64(s.out)*float64(s.in)*float64(s.n)/best.Seconds()/1e12)
	}
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q5_0, tensor.Q2_K, tensor.Q3_K, tensor.Q4_1, tensor.Q5_1} {
		list := shapes[:3]
		switch dt {
		case tensor.Q4_0:
			list = append(append([]shape{}, shapes...), small...)
		case tensor.Q8_0, tensor.Q4_K, tensor.Q6_K:
			list = shapes[:4]
		}
		for _, s := range list {
			timeOne(dt, s)
		}
	}
	t.Log("times in us per MatMul (x quantized on every call)\n" + tb.String())
}

// TestMMQPrefill (with -cuda.profile) times a 7B prompt batch of 512 tokens (32 layers,
// no head, as TestPrefillProfile) with the MMQ kernels and without (dequantization +
// cuBLAS), for each weight format of the Q4_0, Q8_0 and Q4_K_M files.
func TestMMQPrefill(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openTestWith(t, 0, Options{MMQ: true})
	const n = 512
	for _, wt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K} {
		s := newStep7B(t, d, wt, n, n)
		all := func() { s.layers(len(segments7B)) }
		d.mmqOn = true
		on := eagerTime(t, d, all)
		d.mmqOn = false
		off := eagerTime(t, d, all)
		t.Logf("%v prompt batch of %d tokens (32 layers, no head): MMQ %.2f ms = %.0f tok/s; dequant+cuBLAS %.2f ms = %.0f tok/s",
			wt, n, on.Seconds()*1e3, n/on.Seconds(), off.Seconds()*1e3, n/off.Seconds())
		for _, l := range s.ls {
			for _, b := range []backend.Buffer{l.attnNorm, l.ffnNorm, l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down, l.kCache, l.vCache} {
				d.Free(b)
			}
		}
		d.Free(s.head)
	}
}

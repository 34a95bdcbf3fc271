//go:build cgo

package cuda

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// download returns b's bytes.
func download(t *testing.T, d *Device, b backend.Buffer) []byte {
	t.Helper()
	raw := make([]byte, b.DType().RowBytes(b.Cols())*b.Rows())
	if err := d.Download(raw, b); err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestRoPERows checks the prompt-batch RoPE kernels (rope_rows_f32 for one matrix,
// rope2_rows_f32 for a q, k pair of different widths) against the rotation in float64,
// for adjacent and NeoX pairs, partial rotation, frequency factors and positions up to
// 5000, on 17 and 40 rows (both past gemmMinRows).
func TestRoPERows(t *testing.T) {
	d := openTest(t)
	if !d.ropeRows(gemmMinRows, ropeParams{dims: 128}) {
		t.Skip("rope_rows_f32 not loaded (older PTX)")
	}
	tests := []struct {
		name    string
		r       backend.Rope
		factors bool
	}{
		{"adjacent 128", backend.Rope{HeadDim: 128, Dims: 128, Base: 10000, Scale: 1}, false},
		{"neox 128", backend.Rope{HeadDim: 128, Dims: 128, Base: 1000000, Scale: 1, NeoX: true}, false},
		{"partial", backend.Rope{HeadDim: 64, Dims: 32, Base: 500000, Scale: 1}, false},
		{"neox partial", backend.Rope{HeadDim: 80, Dims: 40, Base: 10000, Scale: 1, NeoX: true}, false},
		{"scaled+factors", backend.Rope{HeadDim: 16, Dims: 16, Base: 10000, Scale: 0.25}, true},
	}
	for _, tt := range tests {
		for _, n := range []int{17, 40} {
			t.Run(fmt.Sprintf("%s/n=%d", tt.name, n), func(t *testing.T) {
				if !d.ropeRows(n, ropeParams{dims: tt.r.Dims}) { // else rope_f32 would be what passes
					t.Fatalf("%d rows, %d rotated dims: not on the row kernels", n, tt.r.Dims)
				}
				r := rand.New(rand.NewPCG(uint64(n), 3))
				const qHeads, kHeads = 5, 2
				pos := make([]int32, n)
				praw := make([]byte, 4*n)
				for i := range pos {
					pos[i] = int32(r.IntN(5000))
					praw[4*i], praw[4*i+1] = byte(pos[i]), byte(pos[i]>>8)
				}
				var factors []float32
				if tt.factors {
					factors = make([]float32, tt.r.Dims/2)
					for i := range factors {
						factors[i] = float32(1 + i)
					}
					tt.r.Factors = devBuf(t, d, tensor.F32, 1, len(factors), tensor.Float32Bytes(factors))
				}
				pb := devBuf(t, d, tensor.I32, n, 1, praw)
				for _, pair := range []bool{false, true} {
					q0, k0 := randoms(r, n*qHeads*tt.r.HeadDim), randoms(r, n*kHeads*tt.r.HeadDim)
					q := devBuf(t, d, tensor.F32, n, qHeads*tt.r.HeadDim, tensor.Float32Bytes(q0))
					k := devBuf(t, d, tensor.F32, n, kHeads*tt.r.HeadDim, tensor.Float32Bytes(k0))
					d.RoPE(q, pb, tt.r)
					if pair {
						d.RoPE(k, pb, tt.r)
					}
					checkRoPE(t, "q", tensor.Float32s(download(t, d, q)), q0, pos, tt.r, factors)
					want := k0
					if pair {
						checkRoPE(t, "k", tensor.Float32s(download(t, d, k)), k0, pos, tt.r, factors)
					} else if got := tensor.Float32s(download(t, d, k)); !equalF32(got, want) {
						t.Fatal("RoPE of q alone changed k")
					}
				}
			})
		}
	}
}

func equalF32(a, b []float32) bool {
	return bytes.Equal(tensor.Float32Bytes(a), tensor.Float32Bytes(b))
}

// checkRoPE compares got with x (n, cols) rotated in float64, to 4e-6·(pos+1)
// absolute, backendtest's tolerance.
func checkRoPE(t *testing.T, what string, got, x []float32, pos []int32, r backend.Rope, factors []float32) {
	t.Helper()
	cols := len(x) / len(pos)
	half := r.Dims / 2
	for i, p := range pos {
		want := make([]float64, cols)
		for c := range want {
			want[c] = float64(x[i*cols+c])
		}
		for h := 0; h < cols; h += r.HeadDim {
			for k := range half {
				theta := float64(p) * float64(r.Scale) * math.Pow(float64(r.Base), -2*float64(k)/float64(r.Dims))
				if factors != nil {
					theta /= float64(factors[k])
				}
				a, b := h+2*k, h+2*k+1
				if r.NeoX {
					a, b = h+k, h+k+half
				}
				x0, x1 := want[a], want[b]
				want[a] = x0*math.Cos(theta) - x1*math.Sin(theta)
				want[b] = x0*math.Sin(theta) + x1*math.Cos(theta)
			}
		}
		for c := range want {
			if diff := math.Abs(float64(got[i*cols+c]) - want[c]); !(diff <= 4e-6*float64(p+1)) {
				t.Fatalf("%s row %d (pos %d) col %d: got %v, want %v", what, i, p, c, got[i*cols+c], want[c])
			}
		}
	}
}

// TestHalfActivationReuse checks the GEMM path's F16 copy of its input (halfActivations)
// and SwiGLU's F16 output for the next GEMM (swiglu_h16): a MatMul that reuses them
// gives the bytes of a MatMul from a fresh buffer of the same values, and after an
// Upload, a kernel or an exact call (a held mat-vec) writes the input, or a recorded
// graph replays on new input, the new input is used.
func TestHalfActivationReuse(t *testing.T) {
	d := openTest(t)
	if d.blas == nil {
		t.Skip("no cuBLAS")
	}
	const n, out, in = 40, 72, 512
	r := rand.New(rand.NewPCG(9, 10))
	wq := make([]byte, tensor.Q4_0.RowBytes(in)*out)
	if err := tensor.Quantize(tensor.Q4_0, wq, randoms(r, out*in)); err != nil {
		t.Fatal(err)
	}
	w := devBuf(t, d, tensor.Q4_0, out, in, wq)
	w2 := devBuf(t, d, tensor.F32, in, in, tensor.Float32Bytes(randoms(r, in*in)))
	z := devBuf(t, d, tensor.F32, n, in, tensor.Float32Bytes(randoms(r, n*in)))
	x, y := devBuf(t, d, tensor.F32, n, in, nil), devBuf(t, d, tensor.F32, n, out, nil)
	fresh := func(v []byte) []byte {
		fx, fy := devBuf(t, d, tensor.F32, n, in, v), devBuf(t, d, tensor.F32, n, out, nil)
		d.MatMul(fy, w, fx)
		return download(t, d, fy)
	}
	check := func(what string, v []byte) {
		t.Helper()
		if got := download(t, d, y); !bytes.Equal(got, fresh(v)) {
			t.Fatalf("%s: MatMul differs from one on a fresh buffer", what)
		}
	}
	v1, v2 := tensor.Float32Bytes(randoms(r, n*in)), tensor.Float32Bytes(randoms(r, n*in))
	d.Upload(x, v1)
	d.MatMul(y, w, x)
	d.MatMul(y, w, x) // reuses the F16 x
	check("second MatMul", v1)
	d.Upload(x, v2)
	d.MatMul(y, w, x)
	check("after Upload", v2)
	d.Add(x, x)
	d.MatMul(y, w, x)
	check("after Add", download(t, d, x))
	d.MatMul(y, w, x)
	d.MatMul(x, w2, z) // an F32 GEMM (exact call, no F16 copy of z) writes x: x's copy is stale
	d.MatMul(y, w, x)
	check("after a GEMM into x", download(t, d, x))
	g, err := d.Capture(func(k backend.Kernels) error { k.MatMul(y, w, x); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d.Upload(x, v1)
	g.Launch()
	check("replayed", v1)

	// SwiGLU of a prompt batch, then the GEMM of its output.
	gate, up := randoms(r, n*in), randoms(r, n*in)
	gate[0], gate[1] = -100, 100
	gb, ub := devBuf(t, d, tensor.F32, n, in, tensor.Float32Bytes(gate)), devBuf(t, d, tensor.F32, n, in, tensor.Float32Bytes(up))
	d.SwiGLU(x, gb, ub)
	d.MatMul(y, w, x)
	h := tensor.Float32s(download(t, d, x))
	for i := range h {
		g := float64(gate[i])
		want := g / (1 + math.Exp(-g)) * float64(up[i])
		if diff := math.Abs(float64(h[i]) - want); !(diff <= 1e-6+1e-5*math.Abs(want)) {
			t.Fatalf("SwiGLU element %d: got %v, want %v", i, h[i], want)
		}
	}
	check("after SwiGLU", tensor.Float32Bytes(h))
	d.Upload(gb, tensor.Float32Bytes(up)) // SwiGLU on new input: the F16 copy must follow
	d.SwiGLU(x, gb, ub)
	d.MatMul(y, w, x)
	check("after a second SwiGLU", download(t, d, x))
}

// setGemmTune switches the prefill path's choices (TestPrefillVariants) after the queued
// work drains: a side stream of the other priority is created on its next use; batches of
// aheadRows rows or more dequantize on the side stream; cuBLAS sizes its GEMMs for
// smTarget SMs (0: every SM).
func (d *Device) setGemmTune(tu gemmTune, aheadRows, smTarget int) error {
	if err := d.Sync(); err != nil {
		return err
	}
	return d.do(func() error {
		if d.ahead != nil && d.blas.tune.sideFirst != tu.sideFirst {
			if err := d.ahead.close(); err != nil {
				return err
			}
			d.ahead = nil
		}
		if err := d.blas.setSMTarget(smTarget); err != nil && smTarget != 0 {
			return err
		}
		d.blas.tune, d.aheadRows = tu, aheadRows
		return nil
	})
}

// TestPrefillVariants times a 512-token 7B prompt batch (32 blocks, no head, as
// TestPrefillProfile) under each of the prefill path's choices (gemmTune), for Q4_0,
// Q8_0 and the Q4_K_M mix, with the F16 batch (no dequantization at all) as the floor.
func TestPrefillVariants(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openTest(t)
	if d.blas == nil {
		t.Skip("no cuBLAS")
	}
	info, err := deviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name      string
		tune      gemmTune
		aheadRows int
		smTarget  int // cublasSetSmCountTarget; 0: every SM
	}
	const side, none = gemmMinRows, math.MaxInt // dequantize every batch on the side stream / never
	vs := []variant{
		{"default (wgmma kernels where they win, else dequantization on the side stream + cuBLAS)", gemmTune{}, aheadMinRows, 0},
		{"no wgmma (Options.NoWGMMA)", gemmTune{noWG: true}, aheadMinRows, 0},
		{"wgmma kernels for every shape they run", gemmTune{allWG: true}, aheadMinRows, 0},
		{"side stream at the compute stream's priority", gemmTune{sideFirst: true, noWG: true}, side, 0},
		{"no side stream", gemmTune{noWG: true}, none, 0},
		{"side stream, no F16 activation reuse", gemmTune{noX16: true, noWG: true}, side, 0},
		{"equal priority, no reuse", gemmTune{sideFirst: true, noX16: true, noWG: true}, side, 0},
	}
	for _, k := range []int{8, 16, 32} {
		vs = append(vs, variant{fmt.Sprintf("side stream, cuBLAS sized for %d SMs", info.SMs-k), gemmTune{noWG: true}, side, info.SMs - k})
	}
	const n = 512
	var tb bytes.Buffer
	fmt.Fprintf(&tb, "512-token 7B batch (32 blocks, no head), ms (tok/s), %d SMs\n| variant | Q4_0 | Q8_0 | Q4_K_M |\n|---|---:|---:|---:|\n", info.SMs)
	times := make([][]string, len(vs))
	for _, m := range []mix7B{uniform7B(tensor.Q4_0), uniform7B(tensor.Q8_0), q4KM7B} {
		s := newStepMix7B(t, d, m, n, n)
		for i, v := range vs {
			if err := d.setGemmTune(v.tune, v.aheadRows, v.smTarget); err != nil {
				t.Logf("%s: %v", v.name, err)
				times[i] = append(times[i], "-")
				continue
			}
			el := eagerTime(t, d, func() { s.layers(len(segments7B)) })
			times[i] = append(times[i], fmt.Sprintf("%.2f (%.0f)", el.Seconds()*1e3, n/el.Seconds()))
		}
		if err := d.setGemmTune(gemmTune{}, aheadMinRows, 0); err != nil {
			t.Fatal(err)
		}
		s.free()
	}
	for i, v := range vs {
		fmt.Fprintf(&tb, "| %s | %s | %s | %s |\n", v.name, times[i][0], times[i][1], times[i][2])
	}
	s := newStep7B(t, d, tensor.F16, n, n)
	el := eagerTime(t, d, func() { s.layers(len(segments7B)) })
	fmt.Fprintf(&tb, "F16 weights (no dequantization): %.2f ms (%.0f tok/s)\n", el.Seconds()*1e3, n/el.Seconds())
	s.free()
	t.Log("\n" + tb.String())
}

//go:build cgo

package cuda

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestPDLMarker checks that pdlMarker gives a kernel only the marker of the module that
// defines it (kernelTable): a kernel of a module without the PDL waits, launched with
// PDL, could read its input before the kernel ahead wrote it. And the decode kernels
// meant to overlap (mat-vecs, the activations' quantization, the norms) get their marker.
func TestPDLMarker(t *testing.T) {
	module := map[string]string{}
	for _, k := range pdlMarkers {
		module[k.entry] = k.module
	}
	for _, k := range kernelTable() {
		if m := pdlMarker(k.entry); m != "" && module[m] != k.module {
			t.Errorf("kernel %s of module %s: marker %s of module %q", k.entry, k.module, m, module[m])
		}
	}
	want := map[string]string{"quantize_q8": pdlMatVec, "rms_norm_f32": pdlNorm, "rms_norm_q8": pdlNorm}
	for _, dt := range weightTypes {
		want[fusedEntry(dt)] = pdlMatVec
		for _, nc := range matVecWidths {
			want[mvEntry(dt, nc)] = pdlMatVec
		}
	}
	for entry, m := range want {
		if got := pdlMarker(entry); got != m {
			t.Errorf("pdlMarker(%s) = %q, want %q", entry, got, m)
		}
	}
}

// requirePDL skips t unless d launches its mat-vec and norm kernels with PDL: kernels with
// the markers (sm_90 code), a GPU that runs it, a driver of CUDA 12.3 or newer.
func requirePDL(t *testing.T, d *Device) {
	t.Helper()
	d.mu.Lock()
	on := d.pdl("mv_fused_q4_0") && d.pdl("rms_norm_q8")
	d.mu.Unlock()
	if !on {
		t.Skip("cuda: no PDL launches here (kernels without PDL code, e.g. the compute_80 PTX; GPU before sm_90; driver before 12.3; INFER_CUDA_PDL=0)")
	}
}

// withoutPDL runs fn with d's kernels launched without PDL, as if their code had none.
func withoutPDL(t *testing.T, d *Device, fn func()) {
	t.Helper()
	if err := d.Sync(); err != nil { // nothing held across the switch
		t.Fatal(err)
	}
	d.mu.Lock()
	all := d.funcs
	d.funcs = maps.Clone(all)
	for _, k := range pdlMarkers {
		delete(d.funcs, k.entry)
	}
	d.mu.Unlock()
	defer func() {
		if err := d.Sync(); err != nil {
			t.Error(err)
		}
		d.mu.Lock()
		d.funcs = all
		d.mu.Unlock()
	}()
	fn()
}

// sameBits fails t unless a and b, named what, are the same floats bit for bit.
func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.IsNaN(float64(a[i])) || math.IsNaN(float64(b[i])) {
			t.Fatalf("%s[%d]: NaN (PDL %v, without %v)", what, i, a[i], b[i])
		}
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s[%d] = %v with PDL, %v without", what, i, a[i], b[i])
		}
	}
}

// TestPDL runs the mini block's step with the mat-vec and norm kernels launched with PDL
// and without, eagerly and replayed from a graph, and expects the same bits: PDL changes
// when a kernel starts, never what it computes.
func TestPDL(t *testing.T) {
	d := openTest(t)
	requirePDL(t, d)
	for _, wt := range []tensor.DType{tensor.Q4_0, tensor.Q4_K, tensor.Q6_K, tensor.F16} {
		t.Run(wt.String(), func(t *testing.T) {
			run := func(key string) [][]float32 {
				m := newMiniBlock(t, d, wt)
				m.step()
				m.step()
				for range 3 {
					if err := d.Record(key, func(k backend.Kernels) { m.on(k, m.step) }); err != nil {
						t.Fatal(err)
					}
				}
				return m.state(t)
			}
			with := run("pdl-on-" + wt.String())
			var without [][]float32
			withoutPDL(t, d, func() { without = run("pdl-off-" + wt.String()) })
			if pdlRefused.Load() {
				t.Fatal("cuLaunchKernelEx refused the PDL launches: both runs were without PDL")
			}
			for i, name := range []string{"x", "xb", "q", "k", "v", "o", "g", "u", "h", "att"} {
				sameBits(t, name, with[i], without[i])
			}
		})
	}
}

// TestPDLChain runs 7B-sized norm -> mat-vec (+ residual) chains, where each kernel
// reads what the one before it wrote while the next is already resident, with PDL and
// without, eagerly and from a graph, and expects the same bits: a kernel that read its
// input before its predecessor finished would differ.
func TestPDLChain(t *testing.T) {
	d := openTest(t)
	requirePDL(t, d)
	const dim, ff = 4096, 11008
	for _, wt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		t.Run(wt.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(wt)))
			alloc := func(dt tensor.DType, rows, cols int) backend.Buffer {
				return devBuf(t, d, dt, rows, cols, randomRaw(r, dt, rows, cols))
			}
			norm, wq, wo := alloc(tensor.F32, 1, dim), alloc(wt, dim, dim), alloc(wt, dim, dim)
			wg, wu, wd := alloc(wt, ff, dim), alloc(wt, ff, dim), alloc(wt, dim, ff)
			x0 := alloc(tensor.F32, 1, dim)
			run := func(key string) []float32 {
				x, xb, q, o := alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim)
				g, u, h := alloc(tensor.F32, 1, ff), alloc(tensor.F32, 1, ff), alloc(tensor.F32, 1, ff)
				step := func(k backend.Kernels) {
					for range 4 {
						k.RMSNorm(xb, x, norm, 1e-5)
						k.MatMul(q, wq, xb)
						k.MatMul(o, wo, q)
						k.Add(x, o)
						k.RMSNorm(x, x, norm, 1e-5)
						k.RMSNorm(xb, x, norm, 1e-5)
						k.MatMul(g, wg, xb)
						k.MatMul(u, wu, xb)
						k.SwiGLU(h, g, u)
						k.MatMul(o, wd, h)
						k.Add(x, o)
						k.RMSNorm(x, x, norm, 1e-5)
					}
				}
				d.Copy(x, x0)
				step(d)
				for range 2 {
					if err := d.Record(key, step); err != nil {
						t.Fatal(err)
					}
				}
				raw := make([]byte, dim*4)
				if err := d.Download(raw, x); err != nil {
					t.Fatal(err)
				}
				for _, b := range []backend.Buffer{x, xb, q, o, g, u, h} {
					d.Free(b)
				}
				return tensor.Float32s(raw)
			}
			key := fmt.Sprintf("pdl-chain-%v", wt)
			with := run(key + "-on")
			var without []float32
			withoutPDL(t, d, func() { without = run(key + "-off") })
			if pdlRefused.Load() {
				t.Fatal("cuLaunchKernelEx refused the PDL launches: both runs were without PDL")
			}
			sameBits(t, "x", with, without)
		})
	}
}

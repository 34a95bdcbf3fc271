//go:build cgo

package cuda

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// profile enables TestDecodeProfile, which needs a GPU and a few GB of memory.
var (
	profile    = flag.Bool("cuda.profile", false, "run TestDecodeProfile (per-kernel times of a 7B decode step)")
	profileMix = flag.String("cuda.profile.mix", "Q4_0,Q8_0,Q4_K,Q4_K_M,F16", "TestDecodeProfile: the `files` to profile (weight types, or Q4_K_M)")
)

// fillBytes returns n random bytes from r (the benchmarks' weights, the transfer tests' data).
func fillBytes(r *rand.Rand, n int) []byte {
	raw := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(raw[i:], r.Uint64())
	}
	return raw[:n]
}

// layer7B is one llama-2-7B block on the device: projections of one weight type, an F16
// KV cache.
type layer7B struct {
	attnNorm, ffnNorm backend.Buffer // (1, dim) F32
	wq, wk, wv, wo    backend.Buffer // (dim, dim)
	gate, up, down    backend.Buffer // (ff, dim), (ff, dim), (dim, ff)
	kCache, vCache    backend.Buffer // (ctx, dim) F16
}

// decode7B is a 7B decode step's buffers: distinct layers cycled over 32 (enough weights
// to overflow the L2), the activations of one token, and the output head.
type decode7B struct {
	d                    *Device
	kn                   backend.Kernels // d, or the Kernels of a capture in progress
	ls                   []layer7B
	x, xb, q, k, v, att  backend.Buffer
	g, u, h, pos, logits backend.Buffer
	outNorm, head        backend.Buffer
	rope                 backend.Rope
	at                   backend.Attention
}

const (
	dim7B, ff7B, heads7B, layers7B, vocab7B = 4096, 11008, 32, 32, 32000
)

// mix7B is the weight types of a 7B file: base for every projection, more for v and
// down in every other block (llama.cpp's Q4_K_M gives half of the blocks more bits
// there), head for the output head.
type mix7B struct {
	name             string
	base, more, head tensor.DType
}

// uniform7B is the mix of a file of one weight type.
func uniform7B(wt tensor.DType) mix7B { return mix7B{wt.String(), wt, wt, wt} }

// q4KM7B is the mix of a Q4_K_M file.
var q4KM7B = mix7B{"Q4_K_M", tensor.Q4_K, tensor.Q6_K, tensor.Q6_K}

// newDecode7B allocates a 7B step of one token at position ctx-1.
func newDecode7B(tb testing.TB, d *Device, m mix7B, ctx int) *decode7B {
	return newStepMix7B(tb, d, m, ctx, 1)
}

// newStep7B allocates a 7B step of n tokens at positions ctx-n..ctx-1: a decode step
// for n = 1, a prompt batch from an empty cache for n = ctx.
func newStep7B(tb testing.TB, d *Device, wt tensor.DType, ctx, n int) *decode7B {
	return newStepMix7B(tb, d, uniform7B(wt), ctx, n)
}

// newStepMix7B is newStep7B with the weight types of m.
func newStepMix7B(tb testing.TB, d *Device, m mix7B, ctx, n int) *decode7B {
	wt := m.base
	const distinct = 4
	r := rand.New(rand.NewPCG(5, 6))
	alloc := func(dt tensor.DType, rows, cols int, fill bool) backend.Buffer {
		buf, err := d.Alloc(dt, rows, cols)
		if err != nil {
			tb.Fatal(err)
		}
		if fill {
			raw := fillBytes(r, dt.RowBytes(cols)*rows)
			fixScales(dt, raw)
			if dt == tensor.F32 {
				x := tensor.Float32s(raw)
				for i := range x {
					x[i] = 1
				}
			}
			if err := d.Upload(buf, raw); err != nil {
				tb.Fatal(err)
			}
		}
		return buf
	}
	s := &decode7B{d: d, kn: d, ls: make([]layer7B, distinct)}
	for i := range s.ls {
		vt := wt // v and down
		if i%2 == 0 {
			vt = m.more
		}
		s.ls[i] = layer7B{
			attnNorm: alloc(tensor.F32, 1, dim7B, true), ffnNorm: alloc(tensor.F32, 1, dim7B, true),
			wq: alloc(wt, dim7B, dim7B, true), wk: alloc(wt, dim7B, dim7B, true), wv: alloc(vt, dim7B, dim7B, true), wo: alloc(wt, dim7B, dim7B, true),
			gate: alloc(wt, ff7B, dim7B, true), up: alloc(wt, ff7B, dim7B, true), down: alloc(vt, dim7B, ff7B, true),
			kCache: alloc(tensor.F16, ctx, dim7B, false), vCache: alloc(tensor.F16, ctx, dim7B, false),
		}
	}
	s.x, s.xb = alloc(tensor.F32, n, dim7B, true), alloc(tensor.F32, n, dim7B, false)
	s.q, s.k, s.v, s.att = alloc(tensor.F32, n, dim7B, false), alloc(tensor.F32, n, dim7B, false), alloc(tensor.F32, n, dim7B, false), alloc(tensor.F32, n, dim7B, false)
	s.g, s.u, s.h = alloc(tensor.F32, n, ff7B, false), alloc(tensor.F32, n, ff7B, false), alloc(tensor.F32, n, ff7B, false)
	s.outNorm, s.head, s.logits = alloc(tensor.F32, 1, dim7B, true), alloc(m.head, vocab7B, dim7B, true), alloc(tensor.F32, n, vocab7B, false)
	s.pos = alloc(tensor.I32, n, 1, false)
	p := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(ctx-n+i))
	}
	if err := d.Upload(s.pos, p); err != nil {
		tb.Fatal(err)
	}
	s.rope = backend.Rope{HeadDim: dim7B / heads7B, Dims: dim7B / heads7B, Base: 10000, Scale: 1}
	s.at = backend.Attention{Heads: heads7B, KVHeads: heads7B, HeadDim: dim7B / heads7B, Scale: 0.088}
	return s
}

// segment is a group of the calls of one block, in the model's order (model/llama.go),
// and the weights it reads (none for most).
type segment struct {
	name    string
	run     func(s *decode7B, l *layer7B)
	weights func(l *layer7B) []backend.Buffer
}

var segments7B = []segment{
	{"attn rms_norm (+q8)", func(s *decode7B, l *layer7B) { s.kn.RMSNorm(s.xb, s.x, l.attnNorm, 1e-5) }, nil},
	{"q, k, v mat-vec", func(s *decode7B, l *layer7B) {
		s.kn.MatMul(s.q, l.wq, s.xb)
		s.kn.MatMul(s.k, l.wk, s.xb)
		s.kn.MatMul(s.v, l.wv, s.xb)
	}, func(l *layer7B) []backend.Buffer { return []backend.Buffer{l.wq, l.wk, l.wv} }},
	{"rope q, k", func(s *decode7B, l *layer7B) {
		s.kn.RoPE(s.q, s.pos, s.rope)
		s.kn.RoPE(s.k, s.pos, s.rope)
	}, nil},
	{"set_rows k, v", func(s *decode7B, l *layer7B) {
		s.kn.SetRows(l.kCache, s.k, s.pos)
		s.kn.SetRows(l.vCache, s.v, s.pos)
	}, nil},
	{"attention (+combine)", func(s *decode7B, l *layer7B) { s.kn.Attention(s.att, s.q, l.kCache, l.vCache, s.pos, s.at) }, nil},
	{"o mat-vec + residual", func(s *decode7B, l *layer7B) {
		s.kn.MatMul(s.xb, l.wo, s.att)
		s.kn.Add(s.x, s.xb)
	}, func(l *layer7B) []backend.Buffer { return []backend.Buffer{l.wo} }},
	{"ffn rms_norm (+q8)", func(s *decode7B, l *layer7B) { s.kn.RMSNorm(s.xb, s.x, l.ffnNorm, 1e-5) }, nil},
	{"gate, up mat-vec", func(s *decode7B, l *layer7B) {
		s.kn.MatMul(s.g, l.gate, s.xb)
		s.kn.MatMul(s.u, l.up, s.xb)
	}, func(l *layer7B) []backend.Buffer { return []backend.Buffer{l.gate, l.up} }},
	{"swiglu (+q8)", func(s *decode7B, l *layer7B) { s.kn.SwiGLU(s.h, s.g, s.u) }, nil},
	{"down mat-vec + residual", func(s *decode7B, l *layer7B) {
		s.kn.MatMul(s.xb, l.down, s.h)
		s.kn.Add(s.x, s.xb)
	}, func(l *layer7B) []backend.Buffer { return []backend.Buffer{l.down} }},
}

// on runs fn with the step's kernels issued through k (a capture's).
func (s *decode7B) on(k backend.Kernels, fn func()) {
	s.kn = k
	defer func() { s.kn = s.d }()
	fn()
}

// layers enqueues the first nseg segments of every one of the 32 blocks.
func (s *decode7B) layers(nseg int) {
	for i := range layers7B {
		for _, sg := range segments7B[:nseg] {
			sg.run(s, &s.ls[i%len(s.ls)])
		}
	}
}

// headStep enqueues the final norm and the output head.
func (s *decode7B) headStep() {
	s.kn.RMSNorm(s.xb, s.x, s.outNorm, 1e-5)
	s.kn.MatMul(s.logits, s.head, s.xb)
}

// bufBytes is the bytes of bs.
func bufBytes(bs ...backend.Buffer) float64 {
	var n float64
	for _, b := range bs {
		n += float64(b.DType().RowBytes(b.Cols()) * b.Rows())
	}
	return n
}

// segBytes is the bytes of weights segment sg streams in one step of the 32 blocks.
func (s *decode7B) segBytes(sg segment) float64 {
	if sg.weights == nil {
		return 0
	}
	var n float64
	for i := range layers7B {
		n += bufBytes(sg.weights(&s.ls[i%len(s.ls)])...)
	}
	return n
}

// weightBytes is the bytes of weights one step of the 32 blocks streams.
func (s *decode7B) weightBytes() float64 {
	var n float64
	for _, sg := range segments7B {
		n += s.segBytes(sg)
	}
	return n
}

// BenchmarkDecodeLayer records the kernels of one batch-1 decode step through a
// llama-2-7B block (norm, q/k/v, RoPE, cache writes, attention, o, residual, norm,
// gate/up, SwiGLU, down, residual) as a graph over 32 layers, and reports the time per
// layer and the tokens per second of the 32 layers alone (no output head).
func BenchmarkDecodeLayer(b *testing.B) {
	for _, wt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.F16} {
		b.Run(fmt.Sprintf("%v/ctx=512/graph", wt), func(b *testing.B) { benchDecodeLayer(b, wt, 512, true) })
	}
	b.Run("Q4_K_M/ctx=512/graph", func(b *testing.B) {
		benchDecodeLayerMix(b, q4KM7B, 512, true, func(*Device) {})
	})
	b.Run("Q4_0/ctx=4096/graph", func(b *testing.B) { benchDecodeLayer(b, tensor.Q4_0, 4096, true) })
	b.Run("Q4_0/ctx=512/eager", func(b *testing.B) { benchDecodeLayer(b, tensor.Q4_0, 512, false) })
	b.Run("Q4_0/ctx=512/graph/after-prefill", func(b *testing.B) { // a decode after its prompt
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { prefill7B(b, d, tensor.Q4_0) })
	})
	// Where an after-prefill difference comes from: the side stream (aheadRows), the time
	// since the prefill (clocks), the prefill's weights (F16: no dequantization at all).
	b.Run("Q4_0/ctx=512/graph/after-prefill-side-stream", func(b *testing.B) { // the slowdown aheadMinRows avoids
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { d.aheadRows = gemmMinRows; prefill7B(b, d, tensor.Q4_0); d.aheadRows = aheadMinRows })
	})
	b.Run("Q4_0/ctx=512/graph/after-prefill-2s", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { prefill7B(b, d, tensor.Q4_0); time.Sleep(2 * time.Second) })
	})
	b.Run("Q4_0/ctx=512/graph/after-F16-prefill", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { prefill7B(b, d, tensor.F16) })
	})
	b.Run("Q4_0/ctx=512/graph/after-one-gemm", func(b *testing.B) { // cuBLAS alone
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) {
			w, _ := d.Alloc(tensor.F16, dim7B, dim7B)
			x, _ := d.Alloc(tensor.F32, 512, dim7B)
			y, _ := d.Alloc(tensor.F32, 512, dim7B)
			d.MatMul(y, w, x)
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		})
	})
	// Placement or state: the decode's buffers allocated before the prompt's (the model's
	// order: weights first), allocations without kernels, freed allocations, one tiny
	// kernel without allocations, the prompt's buffers freed before the decode's; and a
	// short cache (capacity 128: one split, no combine), as `infer bench -p 0` runs.
	b.Run("Q4_0/ctx=128/graph", func(b *testing.B) { benchDecodeLayer(b, tensor.Q4_0, 128, true) })
	b.Run("Q4_0/ctx=512/graph/decode-first-prefill", func(b *testing.B) {
		benchDecodeLayerOrder(b, uniform7B(tensor.Q4_0), 512, func(*Device) {}, func(d *Device) { prefill7B(b, d, tensor.Q4_0) })
	})
	b.Run("Q4_0/ctx=512/graph/after-alloc", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { allocMB(b, d, 48, false) })
	})
	b.Run("Q4_0/ctx=512/graph/after-alloc-free", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) { allocMB(b, d, 512, true) })
	})
	b.Run("Q4_0/ctx=512/graph/after-tiny-kernel", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) {
			x, _ := d.Alloc(tensor.F32, 1, 64)
			d.Add(x, x)
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("Q4_0/ctx=512/graph/after-prefill-freed", func(b *testing.B) {
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) {
			p := newStep7B(b, d, tensor.Q4_0, 512, 512)
			p.layers(len(segments7B))
			p.free()
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("Q4_0/ctx=512/graph/after-15-row-step", func(b *testing.B) { // the mat-vec path, no cuBLAS
		benchDecodeLayerSetup(b, tensor.Q4_0, 512, true, func(d *Device) {
			p := newStep7B(b, d, tensor.Q4_0, 512, gemmMinRows-1)
			p.layers(len(segments7B))
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func benchDecodeLayer(b *testing.B, wt tensor.DType, ctx int, graphed bool) {
	benchDecodeLayerSetup(b, wt, ctx, graphed, func(*Device) {})
}

// prefill7B runs a 512-token prompt batch through 32 7B blocks of wt on d.
func prefill7B(b *testing.B, d *Device, wt tensor.DType) {
	p := newStep7B(b, d, wt, 512, 512)
	p.layers(len(segments7B))
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
}

// allocMB allocates mb MiB on d in 16 MiB buffers (zeroed, so one memset each), freed
// again when free is set, and waits for the device.
func allocMB(b *testing.B, d *Device, mb int, free bool) {
	var bufs []backend.Buffer
	for range mb / 16 {
		buf, err := d.Alloc(tensor.F32, 4096, 1024)
		if err != nil {
			b.Fatal(err)
		}
		bufs = append(bufs, buf)
	}
	if free {
		for _, buf := range bufs {
			d.Free(buf)
		}
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
}

// free releases every buffer of the step.
func (s *decode7B) free() {
	for _, l := range s.ls {
		for _, b := range []backend.Buffer{l.attnNorm, l.ffnNorm, l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down, l.kCache, l.vCache} {
			s.d.Free(b)
		}
	}
	for _, b := range []backend.Buffer{s.x, s.xb, s.q, s.k, s.v, s.att, s.g, s.u, s.h, s.pos, s.logits, s.outNorm, s.head} {
		s.d.Free(b)
	}
}

// benchDecodeLayerSetup is benchDecodeLayer on a device prepared by setup.
func benchDecodeLayerSetup(b *testing.B, wt tensor.DType, ctx int, graphed bool, setup func(*Device)) {
	benchDecodeLayerMix(b, uniform7B(wt), ctx, graphed, setup)
}

// benchDecodeLayerMix is benchDecodeLayerSetup with the weight types of m.
func benchDecodeLayerMix(b *testing.B, m mix7B, ctx int, graphed bool, setup func(*Device)) {
	benchDecodeLayerRun(b, m, ctx, graphed, setup, func(*Device) {})
}

// benchDecodeLayerOrder is the graphed benchDecodeLayerMix with late run after the
// decode's buffers are allocated, before its warm-up step.
func benchDecodeLayerOrder(b *testing.B, m mix7B, ctx int, setup, late func(*Device)) {
	benchDecodeLayerRun(b, m, ctx, true, setup, late)
}

// benchDecodeLayerRun is benchDecodeLayerMix with late run after the decode's buffers
// are allocated.
func benchDecodeLayerRun(b *testing.B, m mix7B, ctx int, graphed bool, setup, late func(*Device)) {
	d := openTest(b)
	setup(d)
	s := newDecode7B(b, d, m, ctx)
	late(d)
	step := func() { s.layers(len(segments7B)) }
	step() // warm-up, outside the graph: scratch allocations
	run := step
	if graphed {
		graph, err := d.Capture(func(k backend.Kernels) error { s.on(k, step); return nil })
		if err != nil {
			b.Fatal(err)
		}
		defer graph.Close()
		run = func() { graph.Launch() }
	}
	el := timeDevice(b, d, run)
	b.ReportMetric(el.Seconds()/layers7B*1e6, "us/layer")
	b.ReportMetric(1/el.Seconds(), "tok/s(32layers)")
	b.ReportMetric(s.weightBytes()/el.Seconds()/1e9, "GB/s(weights)")
}

// TestDecodeProfile times a 7B decode step (ctx 512, F16 cache) segment by segment: the
// graph of the first k segments of all 32 blocks, for each k, less the graph of the
// first k-1, so that each segment is timed in its real neighbourhood (fusions,
// quantized activations kept). The output head is timed on its own.
func TestDecodeProfile(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openTest(t)
	for _, name := range strings.Split(*profileMix, ",") {
		m := q4KM7B
		if name != m.name {
			wt, err := tensor.ParseDType(name)
			if err != nil {
				t.Fatalf("-cuda.profile.mix: %v", err)
			}
			m = uniform7B(wt)
		}
		s := newDecode7B(t, d, m, 512)
		times := make([]time.Duration, len(segments7B)+1)
		for k := 1; k <= len(segments7B); k++ {
			times[k] = graphTime(t, d, s, func() { s.layers(k) })
		}
		head := graphTime(t, d, s, s.headStep)
		step := times[len(segments7B)] + head
		var tb strings.Builder
		all := s.weightBytes() + bufBytes(s.head)
		fmt.Fprintf(&tb, "%s decode step (32 layers + head), ctx 512: %.1f us = %.1f tok/s; weights %.2f GB at %.0f GB/s\n",
			m.name, micros(step), 1/step.Seconds(), all/1e9, all/step.Seconds()/1e9)
		fmt.Fprintf(&tb, "| segment | us/layer | us/step | %% of step | weights GB/s |\n|---|---:|---:|---:|---:|\n")
		for k, sg := range segments7B {
			dt := times[k+1] - times[k]
			fmt.Fprintf(&tb, "| %s | %.2f | %.1f | %.1f | %s |\n", sg.name, micros(dt)/layers7B, micros(dt), 100*dt.Seconds()/step.Seconds(), rate(s.segBytes(sg), dt))
		}
		fmt.Fprintf(&tb, "| output norm + head | - | %.1f | %.1f | %s |\n", micros(head), 100*head.Seconds()/step.Seconds(), rate(bufBytes(s.head), head))
		t.Log("\n" + tb.String())
		for _, l := range s.ls {
			for _, b := range []backend.Buffer{l.attnNorm, l.ffnNorm, l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down, l.kCache, l.vCache} {
				d.Free(b)
			}
		}
		d.Free(s.head)
	}
}

// TestPrefillProfile times a 7B prompt batch of 512 tokens (F16 cache, empty before
// the batch) segment by segment, as TestDecodeProfile does a decode step but eagerly
// (no graph: each launch is long enough that launch costs stay hidden): the first k
// segments of all 32 blocks, for each k, less the first k-1.
func TestPrefillProfile(t *testing.T) {
	if !*profile {
		t.Skip("cuda: -cuda.profile not set")
	}
	d := openTest(t)
	const n = 512
	for _, wt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.F16} {
		s := newStep7B(t, d, wt, n, n)
		times := make([]time.Duration, len(segments7B)+1)
		for k := 1; k <= len(segments7B); k++ {
			times[k] = eagerTime(t, d, func() { s.layers(k) })
		}
		step := times[len(segments7B)]
		var tb strings.Builder
		fmt.Fprintf(&tb, "%v prompt batch of %d tokens (32 layers, no head): %.2f ms = %.0f tok/s\n", wt, n, step.Seconds()*1e3, n/step.Seconds())
		fmt.Fprintf(&tb, "| segment | us/layer | ms/batch | %% of batch |\n|---|---:|---:|---:|\n")
		for k, sg := range segments7B {
			dt := times[k+1] - times[k]
			fmt.Fprintf(&tb, "| %s | %.1f | %.2f | %.1f |\n", sg.name, micros(dt)/layers7B, dt.Seconds()*1e3, 100*dt.Seconds()/step.Seconds())
		}
		t.Log("\n" + tb.String())
		for _, l := range s.ls {
			for _, b := range []backend.Buffer{l.attnNorm, l.ffnNorm, l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down, l.kCache, l.vCache} {
				d.Free(b)
			}
		}
		d.Free(s.head)
	}
}

// eagerTime runs enqueue once to warm up, then returns the mean device time of 5 runs.
func eagerTime(t *testing.T, d *Device, enqueue func()) time.Duration {
	enqueue()
	start, _ := d.NewEvent()
	stop, _ := d.NewEvent()
	defer start.Close()
	defer stop.Close()
	const reps = 5
	start.Record()
	for range reps {
		enqueue()
	}
	stop.Record()
	if err := stop.Synchronize(); err != nil {
		t.Fatal(err)
	}
	el, err := stop.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return el / reps
}

func micros(d time.Duration) float64 { return d.Seconds() * 1e6 }

// rate formats bytes read in dt as GB/s, "-" for none.
func rate(bytes float64, dt time.Duration) string {
	if bytes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", bytes/dt.Seconds()/1e9)
}

// graphTime captures enqueue as a graph (after one direct run for scratch allocations)
// and returns the mean device time of 20 replays.
func graphTime(t *testing.T, d *Device, s *decode7B, enqueue func()) time.Duration {
	enqueue()
	g, err := d.Capture(func(k backend.Kernels) error { s.on(k, enqueue); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	start, _ := d.NewEvent()
	stop, _ := d.NewEvent()
	defer start.Close()
	defer stop.Close()
	g.Launch()
	const reps = 20
	start.Record()
	for range reps {
		g.Launch()
	}
	stop.Record()
	if err := stop.Synchronize(); err != nil {
		t.Fatal(err)
	}
	el, err := stop.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return el / reps
}

//go:build cgo

package cuda

import (
	"fmt"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// BenchmarkDecodeAfterSideStream separates what in a prompt batch's use of the
// dequant-ahead side stream leaves every later decode step of the context slower (the
// slowdown aheadMinRows avoids; wall's record in bench/RESULTS.md): the side stream's
// priority, the cross-stream events alone (every mat-mul waited for, so nothing runs
// beside anything) or kernels of the two streams running at once. Each case opens its
// own context, runs its setup, then times the graphed Q4_0 decode step as
// BenchmarkDecodeLayer does.
func BenchmarkDecodeAfterSideStream(b *testing.B) {
	const q = tensor.Q4_0
	side := func(tu gemmTune, body func(*Device)) func(*Device) {
		return func(d *Device) {
			if err := d.setGemmTune(tu, gemmMinRows, 0); err != nil {
				b.Fatal(err)
			}
			body(d)
			if err := d.setGemmTune(gemmTune{}, aheadMinRows, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	prefill := func(d *Device) { prefill7B(b, d, q) }
	cases := []struct {
		name  string
		setup func(*Device)
	}{
		{"nothing", func(*Device) {}},
		{"compute-stream-prefill", prefill},
		{"side-stream-prefill", side(gemmTune{}, prefill)},
		{"side-stream-prefill-equal-priority", side(gemmTune{sideFirst: true}, prefill)},
		{"side-stream-matmuls-each-synced", side(gemmTune{}, func(d *Device) { prefillMatMuls(b, d, q, true) })},
		{"side-stream-matmuls-unsynced", side(gemmTune{}, func(d *Device) { prefillMatMuls(b, d, q, false) })},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchDecodeLayerSetup(b, q, 512, true, c.setup) })
	}
}

// prefillMatMuls multiplies a 512-row batch by the q and gate weights of 32 7B blocks
// of wt, waiting for the device after each mat-mul when synced (so the side stream's
// dequantization never runs beside a GEMM, while its events are still recorded and
// waited for).
func prefillMatMuls(b *testing.B, d *Device, wt tensor.DType, synced bool) {
	s := newStep7B(b, d, wt, 512, 512)
	defer s.free()
	for i := range layers7B {
		l := &s.ls[i%len(s.ls)]
		for _, w := range [...]struct{ o, w backend.Buffer }{{s.q, l.wq}, {s.g, l.gate}} {
			d.MatMul(w.o, w.w, s.xb)
			if synced {
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDecodeAfterOwnPrefill is BenchmarkDecodeAfterSideStream with the prompt
// batch run through the decode step's own weights and caches (as a model does), on the
// compute stream or the side stream.
func BenchmarkDecodeAfterOwnPrefill(b *testing.B) {
	for _, rows := range []int{aheadMinRows, gemmMinRows} {
		b.Run(fmt.Sprintf("aheadRows=%d", rows), func(b *testing.B) {
			const q = tensor.Q4_0
			d := openTest(b)
			s := newDecode7B(b, d, uniform7B(q), 512)
			p := newStep7B(b, d, q, 512, 512)
			own := p.ls
			p.ls = s.ls
			d.aheadRows = rows
			p.layers(len(segments7B))
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
			d.aheadRows = aheadMinRows
			p.ls = own
			p.free()
			step := func() { s.layers(len(segments7B)) }
			step()
			graph, err := d.Capture(func(k backend.Kernels) error { s.on(k, step); return nil })
			if err != nil {
				b.Fatal(err)
			}
			defer graph.Close()
			el := timeDevice(b, d, func() { graph.Launch() })
			b.ReportMetric(el.Seconds()/layers7B*1e6, "us/layer")
			b.ReportMetric(1/el.Seconds(), "tok/s(32layers)")
		})
	}
}

//go:build cgo

package cuda

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// BenchmarkMatVec times the batch-1 mat-vec (decode) kernels on llama-7B shapes and
// reports the weight bytes streamed per second. Each iteration replays a graph of
// launches cycling over enough weight copies to overflow the L2 cache, timed with events.
func BenchmarkMatVec(b *testing.B) {
	shapes := []struct{ out, in int }{{4096, 4096}, {11008, 4096}, {4096, 11008}}
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K, tensor.F16} {
		for _, s := range shapes {
			b.Run(fmt.Sprintf("%v/%dx%d", dt, s.out, s.in), func(b *testing.B) { benchMatVec(b, dt, s.out, s.in, 1) })
		}
	}
	// The other block formats, on one shape.
	for _, dt := range []tensor.DType{tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q2_K, tensor.Q3_K, tensor.Q5_K} {
		b.Run(fmt.Sprintf("%v/4096x4096", dt), func(b *testing.B) { benchMatVec(b, dt, 4096, 4096, 1) })
	}
}

func benchMatVec(b *testing.B, dt tensor.DType, out, in, n int) {
	d := openTest(b)
	wBytes := dt.RowBytes(in) * out
	copies := max(2, 256<<20/wBytes) // ≥ 256 MiB of weights: several times the 60 MB L2
	const launches = 64
	r := rand.New(rand.NewPCG(1, 2))
	raw := fillBytes(r, wBytes)
	fixScales(dt, raw)
	ws := make([]backend.Buffer, copies)
	for i := range ws {
		w, err := d.Alloc(dt, out, in)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Upload(w, raw); err != nil {
			b.Fatal(err)
		}
		ws[i] = w
	}
	x, _ := d.Alloc(tensor.F32, n, in)
	y, _ := d.Alloc(tensor.F32, n, out)
	g, err := d.Capture(func(k backend.Kernels) error {
		for i := range launches {
			k.MatMul(y, ws[i%copies], x)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	start, _ := d.NewEvent()
	stop, _ := d.NewEvent()
	g.Launch() // warm-up
	var total time.Duration
	for b.Loop() {
		start.Record()
		g.Launch()
		stop.Record()
		if err := stop.Synchronize(); err != nil {
			b.Fatal(err)
		}
		el, _ := stop.Since(start)
		total += el
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
	per := total.Seconds() / float64(b.N*launches)
	b.ReportMetric(per*1e6, "us/matvec")
	b.ReportMetric(float64(wBytes)/per/1e9, "GB/s")
	b.ReportMetric(float64(wBytes)/per/4.8e12*100, "%roofline")
}

// fixScales overwrites the f16 scales of random blocks with 2^-10 so that no value is
// NaN or infinite.
func fixScales(dt tensor.DType, raw []byte) {
	bs := dt.BlockBytes()
	var offs []int
	switch dt {
	case tensor.Q4_0, tensor.Q8_0, tensor.Q5_0:
		offs = []int{0}
	case tensor.Q4_1, tensor.Q5_1, tensor.Q4_K, tensor.Q5_K:
		offs = []int{0, 2}
	case tensor.Q2_K:
		offs = []int{80, 82}
	case tensor.Q3_K:
		offs = []int{108}
	case tensor.Q6_K:
		offs = []int{208}
	case tensor.F16:
		for i := 1; i < len(raw); i += 2 {
			raw[i] &= 0x3b // exponent below 15: finite, small
		}
		return
	}
	for b := 0; b+bs <= len(raw); b += bs {
		for _, o := range offs {
			raw[b+o], raw[b+o+1] = 0x00, 0x14 // 2^-10
		}
	}
}

// BenchmarkMatMulPrefill times a 512-row MatMul (prefill through cuBLAS: dequantize to
// F16, GEMM) on a llama-7B projection and reports TFLOP/s.
func BenchmarkMatMulPrefill(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.F16} {
		b.Run(fmt.Sprintf("%v/4096x4096/n=512", dt), func(b *testing.B) {
			const out, in, n, reps = 4096, 4096, 512, 10
			d := openTest(b)
			raw := make([]byte, dt.RowBytes(in)*out)
			r := rand.New(rand.NewPCG(3, 4))
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			fixScales(dt, raw)
			w, _ := d.Alloc(dt, out, in)
			x, _ := d.Alloc(tensor.F32, n, in)
			y, _ := d.Alloc(tensor.F32, n, out)
			if err := d.Upload(w, raw); err != nil {
				b.Fatal(err)
			}
			d.MatMul(y, w, x) // warm-up: scratch, cuBLAS heuristics
			el := timeDevice(b, d, func() {
				for range reps {
					d.MatMul(y, w, x)
				}
			})
			b.ReportMetric(2*out*in*n*reps/el.Seconds()/1e12, "TFLOP/s")
			b.ReportMetric(el.Seconds()/reps*1e6, "us/matmul")
		})
	}
}

// BenchmarkAttentionDecode times one decode step's attention (32 heads of 128 over an
// F16 cache of ctx rows) and reports the cache bytes read per second.
func BenchmarkAttentionDecode(b *testing.B) {
	for _, ctx := range []int{512, 4096} {
		b.Run(fmt.Sprintf("ctx=%d", ctx), func(b *testing.B) {
			const heads, hd, reps = 32, 128, 20
			d := openTest(b)
			k, _ := d.Alloc(tensor.F16, ctx, heads*hd)
			v, _ := d.Alloc(tensor.F16, ctx, heads*hd)
			q, _ := d.Alloc(tensor.F32, 1, heads*hd)
			o, _ := d.Alloc(tensor.F32, 1, heads*hd)
			pos, _ := d.Alloc(tensor.I32, 1, 1)
			p := []byte{byte(ctx - 1), byte((ctx - 1) >> 8), 0, 0}
			if err := d.Upload(pos, p); err != nil {
				b.Fatal(err)
			}
			at := backend.Attention{Heads: heads, KVHeads: heads, HeadDim: hd, Scale: 0.088}
			el := timeDevice(b, d, func() {
				for range reps {
					d.Attention(o, q, k, v, pos, at)
				}
			})
			per := el.Seconds() / reps
			b.ReportMetric(per*1e6, "us/attention")
			b.ReportMetric(float64(2*ctx*heads*hd*2)/per/1e9, "GB/s")
		})
	}
}

// timeDevice returns the device time of the work enqueue queues, averaged over b.Loop.
func timeDevice(b *testing.B, d *Device, enqueue func()) time.Duration {
	start, _ := d.NewEvent()
	stop, _ := d.NewEvent()
	var total time.Duration
	iters := 0
	for b.Loop() {
		start.Record()
		enqueue()
		stop.Record()
		if err := stop.Synchronize(); err != nil {
			b.Fatal(err)
		}
		el, _ := stop.Since(start)
		total += el
		iters++
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
	return total / time.Duration(iters)
}

// BenchmarkAttentionPrefill times the attention of a whole prompt batch of n rows over
// an F16 cache (7B shape: 32 heads, head dim 128) on the flash path and on the per-row
// path it replaces (-bench 'AttentionPrefill'), with the TFLOP/s of the causal
// q·kᵀ and p·v products.
func BenchmarkAttentionPrefill(b *testing.B) {
	for _, n := range []int{512, 2048, 5071} {
		for _, flash := range []bool{true, false} {
			b.Run(fmt.Sprintf("n=%d/flash=%v", n, flash), func(b *testing.B) {
				const heads, hd = 32, 128
				d := openTest(b)
				k, _ := d.Alloc(tensor.F16, n, heads*hd)
				v, _ := d.Alloc(tensor.F16, n, heads*hd)
				q, _ := d.Alloc(tensor.F32, n, heads*hd)
				o, _ := d.Alloc(tensor.F32, n, heads*hd)
				pos, _ := d.Alloc(tensor.I32, n, 1)
				p := make([]int32, n)
				for i := range p {
					p[i] = int32(i)
				}
				raw := make([]byte, 4*n)
				for i, x := range p {
					binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
				}
				if err := d.Upload(pos, raw); err != nil {
					b.Fatal(err)
				}
				d.noFlash = !flash
				at := backend.Attention{Heads: heads, KVHeads: heads, HeadDim: hd, Scale: 0.088}
				el := timeDevice(b, d, func() { d.Attention(o, q, k, v, pos, at) })
				b.ReportMetric(el.Seconds()*1e3, "ms")
				b.ReportMetric(2*2*float64(n)*float64(n+1)/2*hd*heads/el.Seconds()/1e12, "TFLOP/s")
			})
		}
	}
}

package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// BenchmarkFloatTile times this level's F32 and F16 matmul tiles (floatTile) on the
// shapes of the test models (rows of 64, 172, 256 and 768 elements), 64 weight rows
// against a prompt batch of 64 rows (sgemm) and a decode row (vec dot), and the Go
// definitions one output at a time for comparison. It reports multiply-adds per second.
func BenchmarkFloatTile(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, wt := range []tensor.DType{tensor.F32, tensor.F16} {
		for _, n := range []int{64, 172, 256, 768} {
			for _, mx := range []int{64, 1} {
				sgemm := tinyBLAS(mx, n, 64)
				const mw = 64
				w := randRows(r, wt, mw, n, wt.RowBytes(n))
				xq := randRows(r, wt, mx, n, wt.RowBytes(n))
				x := xq
				if wt == tensor.F16 { // the tile takes the activations widened
					x = make([]byte, mx*4*n)
					for i := range mx {
						row := tensor.Float32s(x[i*4*n:])
						for j, h := range uint16s(xq[i*wt.RowBytes(n):])[:n] {
							row[j] = fromF16(h)
						}
					}
				}
				dst := make([]float32, mx*mw)
				xs := len(x) / mx
				if tile := floatTile(wt, sgemm); tile != nil {
					b.Run(fmt.Sprintf("%v/n=%d/rows=%d/tile", wt, n, mx), func(b *testing.B) {
						for b.Loop() {
							tile(n, w, wt.RowBytes(n), mw, x, xs, mx, dst, mw)
						}
						b.ReportMetric(float64(b.N)*float64(mw*mx*n)/b.Elapsed().Seconds()/1e9, "GMAC/s")
					})
				}
				b.Run(fmt.Sprintf("%v/n=%d/rows=%d/go", wt, n, mx), func(b *testing.B) {
					xrb := wt.RowBytes(n)
					for b.Loop() {
						for i := range mx {
							for o := range mw {
								dst[i*mw+o] = goDot(wt, sgemm, w[o*xrb:(o+1)*xrb], xq[i*xrb:(i+1)*xrb], n)
							}
						}
					}
					b.ReportMetric(float64(b.N)*float64(mw*mx*n)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}

// BenchmarkAttendOneChunk times attendOneChunk for one query row and head over an F16
// cache, for the head sizes of the test models and key counts of a prompt and a
// generation.
func BenchmarkAttendOneChunk(b *testing.B) {
	benchAttend(b, attendOneChunk, rand.New(rand.NewPCG(3, 4)), []int{8, 32, 128}, []int{32, 256})
}

// BenchmarkAttendTiled times attendTiled (the prompt kernel over an F16 cache) for one
// query row and head, for the head sizes of the test models that take it.
func BenchmarkAttendTiled(b *testing.B) {
	benchAttend(b, attendTiled, rand.New(rand.NewPCG(5, 6)), []int{32, 64, 128}, []int{64, 256})
}

// benchAttend times attend for one query row and head over random F16 keys and values,
// for each head size and key count; it reports time per key, and CPU time per key (on a
// shared machine: without others' turns).
func benchAttend(b *testing.B, attend func(out, q []float32, k, v []uint16, h kvHead, scale float32, sc *attentionScratch), r *rand.Rand, hds, keys []int) {
	for _, hd := range hds {
		for _, nkeys := range keys {
			cols := 4 * hd
			k, v := make([]uint16, nkeys*cols), make([]uint16, nkeys*cols)
			for i := range k {
				k[i], v[i] = toF16(float32(r.NormFloat64())), toF16(float32(r.NormFloat64()))
			}
			q, out := make([]float32, hd), make([]float32, hd)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			var sc attentionScratch
			sc.grow(nkeys, hd)
			h := kvHead{off: hd, cols: cols, n: nkeys}
			b.Run(fmt.Sprintf("hd=%d/keys=%d", hd, nkeys), func(b *testing.B) {
				t0, n := processTime(), 0
				for b.Loop() {
					attend(out, q, k, v, h, 0.3, &sc)
					n++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nkeys), "ns/key")
				if cpu := processTime() - t0; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*nkeys), "cpu-ns/key")
				}
			})
		}
	}
}

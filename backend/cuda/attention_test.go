//go:build cgo

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestAttentionSplit checks the split (flash-decoding) path, which the conformance
// suite's small caches do not reach: a few query rows over a long cache, with positions
// that leave some splits empty.
func TestAttentionSplit(t *testing.T) {
	for _, kv := range []tensor.DType{tensor.F32, tensor.F16} {
		for _, hd := range []int{64, 128} {
			t.Run(fmt.Sprintf("%v/hd=%d", kv, hd), func(t *testing.T) {
				d := openTest(t)
				const ctx, heads, kvHeads = 1500, 8, 2
				pos := []int32{1499, 700, 0}
				r := rand.New(rand.NewPCG(uint64(hd), 9))
				q := randoms(r, len(pos)*heads*hd)
				k, v := randoms(r, ctx*kvHeads*hd), randoms(r, ctx*kvHeads*hd)
				if kv == tensor.F16 {
					k, v = roundF16(k), roundF16(v)
				}
				at := backend.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
				got := runAttention(t, d, kv, q, k, v, pos, at)
				want := attentionRef(q, k, v, pos, at)
				for i := range want {
					if e := math.Abs(float64(got[i]) - want[i]); e > 1e-5+1e-4*math.Abs(want[i]) {
						t.Fatalf("[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

func runAttention(t *testing.T, d *Device, kv tensor.DType, q, k, v []float32, pos []int32, at backend.Attention) []float32 {
	t.Helper()
	n, ctx := len(pos), len(k)/(at.KVHeads*at.HeadDim)
	enc := func(x []float32) []byte {
		b := make([]byte, kv.RowBytes(len(x)))
		if err := tensor.Quantize(kv, b, x); err != nil {
			t.Fatal(err)
		}
		return b
	}
	p := make([]byte, 4*n)
	for i, x := range pos {
		p[4*i], p[4*i+1] = byte(x), byte(x>>8)
	}
	cols := at.Heads * at.HeadDim
	o := devBuf(t, d, tensor.F32, n, cols, nil)
	d.Attention(o, devBuf(t, d, tensor.F32, n, cols, tensor.Float32Bytes(q)), devBuf(t, d, kv, ctx, at.KVHeads*at.HeadDim, enc(k)),
		devBuf(t, d, kv, ctx, at.KVHeads*at.HeadDim, enc(v)), devBuf(t, d, tensor.I32, n, 1, p), at)
	out := make([]float32, n*cols)
	if err := d.Download(tensor.Float32Bytes(out), o); err != nil {
		t.Fatal(err)
	}
	return out
}

// attentionRef is softmax(q·kᵀ·scale)·v per row and head in float64.
func attentionRef(q, k, v []float32, pos []int32, at backend.Attention) []float64 {
	hd, kvCols := at.HeadDim, at.KVHeads*at.HeadDim
	out := make([]float64, len(q))
	for i, p := range pos {
		for h := 0; h < at.Heads; h++ {
			qo, ko := i*at.Heads*hd+h*hd, h/(at.Heads/at.KVHeads)*hd
			s := make([]float64, p+1)
			maxS := math.Inf(-1)
			for j := range s {
				for e := 0; e < hd; e++ {
					s[j] += float64(q[qo+e]) * float64(k[j*kvCols+ko+e])
				}
				s[j] *= float64(at.Scale)
				maxS = math.Max(maxS, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - maxS)
				sum += s[j]
			}
			for j := range s {
				for e := 0; e < hd; e++ {
					out[qo+e] += s[j] / sum * float64(v[j*kvCols+ko+e])
				}
			}
		}
	}
	return out
}

func randoms(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// roundF16 rounds each value to the nearest half, so that references see the cache as stored.
func roundF16(x []float32) []float32 {
	b := make([]byte, 2*len(x))
	tensor.Quantize(tensor.F16, b, x)
	y := make([]float32, len(x))
	tensor.Dequantize(tensor.F16, y, b)
	return y
}

// TestFlashAttention checks the tensor-core path of prompt batches over an F16 cache
// (flash_attn_f16_hdN) for every head dimension it is built for, batches that are not a
// multiple of its 64-row tiles, a batch starting deep in the cache, and grouped K/V
// heads. The reference sees q rounded to f16 as the kernel does; the probabilities'
// rounding to f16 for p·v bounds the rest (2^-11 relative each, so about 1e-3 of max|v|).
func TestFlashAttention(t *testing.T) {
	for _, hd := range []int{64, 80, 96, 128} {
		for _, tc := range []struct{ n, first int }{{9, 0}, {70, 0}, {130, 37}, {64, 500}} {
			t.Run(fmt.Sprintf("hd=%d/n=%d/first=%d", hd, tc.n, tc.first), func(t *testing.T) {
				if _, ok := flashEntry(tensor.F16, tc.n, hd); !ok {
					t.Fatalf("no flash kernel for n=%d hd=%d", tc.n, hd)
				}
				d := openTest(t)
				const heads, kvHeads = 8, 2
				ctx := tc.first + tc.n + 40 // rows past the last position hold data too
				pos := make([]int32, tc.n)
				for i := range pos {
					pos[i] = int32(tc.first + i)
				}
				r := rand.New(rand.NewPCG(uint64(hd*1000+tc.n), 17))
				q := randoms(r, tc.n*heads*hd)
				k, v := roundF16(randoms(r, ctx*kvHeads*hd)), roundF16(randoms(r, ctx*kvHeads*hd))
				at := backend.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
				got := runAttention(t, d, tensor.F16, q, k, v, pos, at)
				want := attentionRef(roundF16(q), k, v, pos, at)
				worst := 0.0
				for i := range want {
					e := math.Abs(float64(got[i]) - want[i])
					if math.IsNaN(float64(got[i])) || e > 2e-3+2e-3*math.Abs(want[i]) {
						t.Fatalf("[%d] (row %d) = %g, want %g", i, i/(heads*hd), got[i], want[i])
					}
					worst = max(worst, e)
				}
				t.Logf("max |error| %.2g", worst)
			})
		}
	}
}

package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// testRoPE checks RoPE against rotations by θ = pos·scale·base^(-2i/dims)/factor_i in
// float64, for adjacent and NeoX pairs, partial rotation and frequency factors.
func testRoPE(t *testing.T, d backend.Device) {
	tests := []struct {
		name    string
		r       backend.Rope
		factors bool
	}{
		{"adjacent", backend.Rope{HeadDim: 16, Dims: 16, Base: 10000, Scale: 1}, false},
		{"neox", backend.Rope{HeadDim: 16, Dims: 16, Base: 10000, Scale: 1, NeoX: true}, false},
		{"partial", backend.Rope{HeadDim: 16, Dims: 8, Base: 500000, Scale: 1}, false},
		{"neox partial", backend.Rope{HeadDim: 16, Dims: 8, Base: 1000000, Scale: 1, NeoX: true}, false},
		{"neox 128", backend.Rope{HeadDim: 128, Dims: 128, Base: 1000000, Scale: 1, NeoX: true}, false},
		{"scaled+factors", backend.Rope{HeadDim: 8, Dims: 8, Base: 10000, Scale: 0.25}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const heads = 3
			r := rng(8)
			pos := []int32{0, 1, 7, 300}
			cols := heads * tt.r.HeadDim
			x := normals(r, len(pos)*cols, 1)
			var factors []float32
			if tt.factors {
				factors = []float32{1, 2, 4, 8}
				tt.r.Factors = f32Buf(t, d, 1, factors)
			}
			buf := f32Buf(t, d, len(pos), x)
			d.RoPE(buf, i32Buf(t, d, pos), tt.r)
			got := downloadF32(t, d, buf)
			want := ropeRef(x, pos, cols, tt.r, factors)
			for i, p := range pos {
				compare(t, fmt.Sprintf("pos %d", p), got[i*cols:(i+1)*cols], want[i*cols:(i+1)*cols], 4e-6*float64(p+1), 0)
			}
		})
	}
}

func ropeRef(x []float32, pos []int32, cols int, r backend.Rope, factors []float32) []float64 {
	y := widen(x)
	half := r.Dims / 2
	for i, p := range pos {
		for h := 0; h < cols; h += r.HeadDim {
			for k := 0; k < half; k++ {
				theta := float64(p) * float64(r.Scale) * math.Pow(float64(r.Base), -2*float64(k)/float64(r.Dims))
				if factors != nil {
					theta /= float64(factors[k])
				}
				a, b := i*cols+h+2*k, i*cols+h+2*k+1
				if r.NeoX {
					a, b = i*cols+h+k, i*cols+h+k+half
				}
				x0, x1 := float64(x[a]), float64(x[b])
				y[a] = x0*math.Cos(theta) - x1*math.Sin(theta)
				y[b] = x0*math.Sin(theta) + x1*math.Cos(theta)
			}
		}
	}
	return y
}

// testAttention checks causal grouped-query attention over F32 and F16 caches, for a
// small batch and one of 70 rows (llama.cpp's CPU flash attention changes kernel at 64),
// against softmax(q·k·scale)·v in float64 over the cache as stored. Cache rows past a
// query's position hold data, so attending to them would show.
func testAttention(t *testing.T, d backend.Device) {
	tests := []struct {
		kv         tensor.DType
		n, headDim int
		first      int // position of the batch's first row
		abs        float64
	}{
		{tensor.F32, 4, 8, 9, 1e-5},
		{tensor.F32, 70, 16, 0, 1e-5},
		{tensor.F16, 4, 32, 9, 4e-3},
		{tensor.F16, 70, 32, 3, 4e-3},
		{tensor.F16, 3, 8, 0, 4e-3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/n=%d/hd=%d", tt.kv, tt.n, tt.headDim), func(t *testing.T) {
			a := backend.Attention{Heads: 4, KVHeads: 2, HeadDim: tt.headDim, Scale: float32(1 / math.Sqrt(float64(tt.headDim)))}
			ctx := tt.first + tt.n + 5
			qCols, kvCols := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
			r := rng(uint64(9 + tt.n))
			q := normals(r, tt.n*qCols, 1)
			kq, vq := quantized(t, tt.kv, normals(r, ctx*kvCols, 1)), quantized(t, tt.kv, normals(r, ctx*kvCols, 1))
			pos := make([]int32, tt.n)
			for i := range pos {
				pos[i] = int32(tt.first + i)
			}
			dst := upload(t, d, tensor.F32, tt.n, qCols, nil)
			d.Attention(dst, f32Buf(t, d, tt.n, q), upload(t, d, tt.kv, ctx, kvCols, kq), upload(t, d, tt.kv, ctx, kvCols, vq), i32Buf(t, d, pos), a)
			want := attentionRef(q, dequantized(t, tt.kv, kq, ctx*kvCols), dequantized(t, tt.kv, vq, ctx*kvCols), pos, a)
			compare(t, "Attention", downloadF32(t, d, dst), want, tt.abs, 0)
		})
	}
}

func attentionRef(q, k, v []float32, pos []int32, a backend.Attention) []float64 {
	hd, qCols, kvCols := a.HeadDim, a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	out := make([]float64, len(q))
	for i, p := range pos {
		for h := 0; h < a.Heads; h++ {
			kvo := h / (a.Heads / a.KVHeads) * hd
			s := make([]float64, p+1)
			m := math.Inf(-1)
			for j := range s {
				for e := 0; e < hd; e++ {
					s[j] += float64(q[i*qCols+h*hd+e]) * float64(k[j*kvCols+kvo+e])
				}
				s[j] *= float64(a.Scale)
				m = math.Max(m, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			for j := range s {
				for e := 0; e < hd; e++ {
					out[i*qCols+h*hd+e] += s[j] / sum * float64(v[j*kvCols+kvo+e])
				}
			}
		}
	}
	return out
}

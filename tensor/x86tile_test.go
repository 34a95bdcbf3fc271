package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestX86RepackTiles: every tile form of the x86repack.go dots gives, for every output
// of tiles of random shapes, strides and data, the one-output function's bits.
func TestX86RepackTiles(t *testing.T) {
	cases := []struct {
		name string
		typ  DType
		f    func(n int, w, x []byte) float32
		tile func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)
	}{
		{"Q4_K gemm", Q4_K, X86RepackGemmDotFunc(Q4_K), X86RepackGemmTileFunc(Q4_K)},
		{"Q4_0 gemm", Q4_0, X86RepackGemmDotFunc(Q4_0), X86RepackGemmTileFunc(Q4_0)},
		{"Q5_K vec_dot", Q5_K, X86DotFunc(Q5_K), X86DotTileFunc(Q5_K)},
		{"Q6_K vec_dot", Q6_K, X86DotFunc(Q6_K), X86DotTileFunc(Q6_K)},
		{"Q4_1 vec_dot", Q4_1, X86DotFunc(Q4_1), X86DotTileFunc(Q4_1)},
	}
	r := rand.New(rand.NewPCG(401, 402))
	for _, c := range cases {
		typ, xt := c.typ, c.typ.VecDotType()
		bs, bb := typ.BlockSize(), typ.BlockBytes()
		for trial := range 300 {
			nb := 1 + r.IntN(40)
			if trial%10 == 0 {
				nb = 1 + r.IntN(3)
			}
			n, mw, mx := bs*nb, r.IntN(11), r.IntN(11)
			ws := typ.RowBytes(n) + r.IntN(3)*bb
			xs := xt.RowBytes(n) + r.IntN(3)*xt.BlockBytes()
			w := make([]byte, max(0, (mw-1)*ws+typ.RowBytes(n)))
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for b := 0; b < len(w)/bb; b++ {
				putHalf(w[b*bb:], float32(r.NormFloat64()))
				putHalf(w[b*bb+2:], float32(r.NormFloat64()))
			}
			x := make([]byte, max(0, (mx-1)*xs+xt.RowBytes(n)))
			for i := 0; i < mx; i++ {
				a := randActivations(r, n)
				if trial%5 == 4 { // extreme activations: every quant ±127
					for k := range a {
						a[k] = float32(1 - 2*(k&1))
					}
				}
				if err := QuantizeActivations(xt, x[i*xs:i*xs+xt.RowBytes(n)], a); err != nil {
					t.Fatal(err)
				}
			}
			ds := mw + r.IntN(3)
			dst := make([]float32, max(0, (mx-1)*ds+mw))
			c.tile(n, w, ws, mw, x, xs, mx, dst, ds)
			for i := 0; i < mx; i++ {
				for o := 0; o < mw; o++ {
					if want := c.f(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*ds+o]) != math.Float32bits(want) {
						t.Fatalf("%s trial %d (%d blocks, %d×%d): [%d][%d] = %.9g, one by one %.9g", c.name, trial, nb, mx, mw, i, o, dst[i*ds+o], want)
					}
				}
			}
		}
	}
}

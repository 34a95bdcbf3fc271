package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// tileOrder is one float order of a weight type: the tile function this build
// dispatches to and the Go code whose bits every output must have.
type tileOrder struct {
	name string
	typ  DType
	tile tileFn
	ref  func(n int, w, x []byte) float32
	gemm func(n int, w, x []byte) float32 // the reference of the first mx−mx%4 rows, if not ref
}

// tileOrders lists every tile function of the package with its Go reference.
func tileOrders() []tileOrder {
	var c []tileOrder
	repack := map[DType][2]func(n int, w, x []byte) float32{
		Q4_0: {dotQ4_0RepackGo, dotQ4_0RepackGo},
		Q4_K: {dotQ4KRepackGo, dotQ4KRepackGemmGo},
	}
	x86 := map[DType]func(n int, w, x []byte) float32{
		Q8_0: dotQ8_0x86Go, Q5_0: dotQ5_0x86Go, Q4_0: dotQ4_0x86Go, Q4_1: dotQ4_1x86Go,
		Q5_K: dotQ5Kx86Go, Q6_K: dotQ6Kx86Go,
	}
	generic := map[DType]func(n int, w, x []byte) float32{
		Q4_0: dotQ4_0Go, Q4_1: dotQ4_1Go, Q5_0: dotQ5_0Go, Q5_1: dotQ5_1Go, Q8_0: dotQ8_0Go,
		Q2_K: dotQ2KGo, Q3_K: dotQ3KGo, Q4_K: dotQ4KGo, Q5_K: dotQ5KGo, Q6_K: dotQ6KGo,
	}
	for _, t := range []DType{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		if r, ok := repack[t]; ok {
			c = append(c, tileOrder{"repack", t, X86RepackTileFunc(t), r[0], r[1]})
			c = append(c, tileOrder{"repack gemm", t, X86RepackGemmTileFunc(t), r[1], nil})
		}
		if f, ok := x86[t]; ok && X86DotTileFunc(t) != nil {
			c = append(c, tileOrder{"x86", t, X86DotTileFunc(t), f, nil})
		}
		if f := DotTileFunc(t); f != nil {
			c = append(c, tileOrder{"generic", t, f, generic[t], nil})
		}
	}
	return c
}

// randomWeights fills rows of type t with random bytes and random finite scales
// (subnormal and zero at times).
func randomWeights(r *rand.Rand, t DType, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	bb := t.BlockBytes()
	offs := map[DType][]int{
		Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0},
		Q2_K: {q2KD, q2KD + 2}, Q3_K: {q3KD}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {q6KD},
	}[t]
	for k := 0; k+bb <= len(b); k += bb {
		for _, o := range offs {
			h := F32ToF16(float32(r.NormFloat64()))
			switch r.IntN(16) {
			case 0:
				h = 0
			case 1:
				h = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15
			}
			b[k+o], b[k+o+1] = byte(h), byte(h>>8)
		}
	}
}

// TestTilesMatchGo: every tile function, at the kernel level of this build (run the
// package with -tags infer_avx2 and -tags infer_portable for the lower ones), gives for
// every output of tiles of random shapes, strides and bytes the bits of its Go code.
func TestTilesMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(901, 902))
	for _, c := range tileOrders() {
		t.Run(fmt.Sprintf("%v/%s", c.typ, c.name), func(t *testing.T) {
			typ, xt := c.typ, c.typ.VecDotType()
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			trials := 120
			if testing.Short() {
				trials = 30
			}
			for trial := range trials {
				nb := 1 + r.IntN(12)
				switch trial % 10 {
				case 0:
					nb = 1 + r.IntN(2)
				case 1:
					nb = 40 + r.IntN(100)
				}
				mw, mx := r.IntN(21), r.IntN(11)
				if trial%7 == 0 {
					mx = 1
				}
				n := bs * nb
				ws := typ.RowBytes(n) + r.IntN(3)*bb
				xs := xt.RowBytes(n) + r.IntN(3)*xt.BlockBytes()
				w := make([]byte, max(0, (mw-1)*ws+typ.RowBytes(n)))
				randomWeights(r, typ, w)
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
					if trial%3 == 2 && xt != Q8_K { // any quant bytes, -128 included
						for k := 0; k < nb; k++ {
							q := x[i*xs+k*xt.BlockBytes()+xt.BlockBytes()-QK:][:QK]
							for j := range q {
								q[j] = byte(r.Uint32())
							}
						}
					}
				}
				ds := mw + r.IntN(3)
				dst := make([]float32, max(0, (mx-1)*ds+mw))
				for i := range dst {
					dst[i] = float32(math.NaN())
				}
				c.tile(n, w, ws, mw, x, xs, mx, dst, ds)
				for i := 0; i < mx; i++ {
					ref := c.ref
					if c.gemm != nil && i < mx-mx%X86RepackGemmRows {
						ref = c.gemm
					}
					for o := 0; o < mw; o++ {
						if want := ref(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*ds+o]) != math.Float32bits(want) {
							t.Fatalf("trial %d (%d blocks, %d×%d): [%d][%d] = %.9g, Go %.9g", trial, nb, mx, mw, i, o, dst[i*ds+o], want)
						}
					}
				}
			}
		})
	}
}

// TestDotBF16F32MatchesGo: DotBF16F32 at this build's level gives the Go code's bits,
// for row lengths that are and are not multiples of eight.
func TestDotBF16F32MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(903, 904))
	for trial := range 500 {
		n := r.IntN(300)
		w, x := make([]byte, 2*n), make([]float32, n)
		for i := range n {
			h := F32ToBF16(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20)))
			w[2*i], w[2*i+1] = byte(h), byte(h>>8)
			x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
		}
		got, want := DotBF16F32(n, w, Float32Bytes(x)), dotBF16F32Go(n, w, Float32Bytes(x))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("trial %d, n %d: %.9g, Go %.9g", trial, n, got, want)
		}
	}
}

// TestQuantizeQ8KMatchesGo: the Q8_K quantizer at this build's level gives the bytes of
// the Go code, ties, zero blocks, equal maxima of either sign, Inf and NaN included.
func TestQuantizeQ8KMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(905, 906))
	for trial := range 2000 {
		x := randActivations(r, QKK)
		switch trial % 8 {
		case 1: // the largest magnitude twice, with both signs
			a := float32(r.NormFloat64() * 10)
			i, j := r.IntN(QKK), r.IntN(QKK)
			x[i], x[j] = a, -a
		case 2:
			x[r.IntN(QKK)] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 3:
			x[r.IntN(QKK)] = float32(math.NaN())
		case 4:
			clear(x)
		case 5: // integers scaled so that many quants are ties
			for k := range x {
				x[k] = float32(r.IntN(255)-127) * 0.5
			}
		}
		got, want := make([]byte, q8KBytes), make([]byte, q8KBytes)
		quantizeQ8K(got, x)
		quantizeBlockQ8K(want, x)
		if string(got) != string(want) {
			t.Fatalf("trial %d: % x\nGo % x", trial, got, want)
		}
	}
}

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestX86PreparedTile checks that an X86PreparedTile's Tile over rows its Prepare
// converted gives X86DotTileFunc's outputs bit for bit (Q8_0: weights of every byte,
// odd block counts, weight rows past groups of four, several chunks of tileChunkBytes),
// and that X86PreparedTileFunc declines what it does not prepare.
func TestX86PreparedTile(t *testing.T) {
	for _, c := range []struct {
		typ   DType
		n, mx int
	}{{Q4_0, 256, 64}, {Q8_0, 256, 3}, {Q8_0, 16, 64}} {
		if _, ok := X86PreparedTileFunc(c.typ, c.n, c.mx); ok {
			t.Errorf("X86PreparedTileFunc(%v, %d, %d) reports a prepared tile", c.typ, c.n, c.mx)
		}
	}
	if _, ok := X86PreparedTileFunc(Q8_0, 256, 64); !ok {
		if hasFMA {
			t.Fatalf("no prepared Q8_0 tile at level %v", Level())
		}
		t.Skipf("no Q8_0 lane kernels at level %v", Level())
	}
	r := rand.New(rand.NewPCG(71, 72))
	for trial := range 40 {
		nb, mw, mx := 1+r.IntN(9), 1+r.IntN(13), 4+r.IntN(9)
		if trial%10 == 9 { // several chunks of weight rows
			nb, mw, mx = 128, tileChunkBytes/Q8_0.RowBytes(128*QK)+7, 5
		}
		n := nb * QK
		pt, _ := X86PreparedTileFunc(Q8_0, n, mx)
		ws, xs, ds := Q8_0.RowBytes(n)+r.IntN(2)*q8_0Bytes, Q8_0.RowBytes(n)+r.IntN(3), mw+r.IntN(3)
		w := make([]byte, (mw-1)*ws+Q8_0.RowBytes(n))
		randomWeights(r, Q8_0, w)
		x := make([]byte, (mx-1)*xs+Q8_0.RowBytes(n))
		for i := range mx {
			if err := QuantizeActivations(Q8_0, x[i*xs:i*xs+Q8_0.RowBytes(n)], randActivations(r, n)); err != nil {
				t.Fatal(err)
			}
		}
		ps := pt.RowBytes(n) + r.IntN(2)*32
		xp := make([]byte, (mx-1)*ps+pt.RowBytes(n))
		for i := range mx {
			pt.Prepare(xp[i*ps:], x[i*xs:], n)
		}
		got, want := make([]float32, (mx-1)*ds+mw), make([]float32, (mx-1)*ds+mw)
		pt.Tile(n, w, ws, mw, xp, ps, mx, got, ds)
		X86DotTileFunc(Q8_0)(n, w, ws, mw, x, xs, mx, want, ds)
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("trial %d (%d blocks, %d×%d): [%d] = %g, X86DotTileFunc %g", trial, nb, mx, mw, k, got[k], want[k])
			}
		}
	}
}

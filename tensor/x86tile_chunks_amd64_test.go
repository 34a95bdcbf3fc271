package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestX86TilesAcrossChunks checks the x86-order tiles of the 32-element formats on
// tiles of more weight rows than one chunk of tileChunkBytes holds (several chunks and
// a last partial one of an odd number of rows), bit for bit against the Go order:
// TestTilesMatchGo's tiles fit in one chunk.
func TestX86TilesAcrossChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	for _, c := range tileOrders() {
		if c.name != "x86" || c.typ.BlockSize() != QK {
			continue
		}
		t.Run(fmt.Sprint(c.typ), func(t *testing.T) {
			typ, xt := c.typ, c.typ.VecDotType()
			const nb, mx = 128, 6
			n := nb * QK
			mw := 3*(tileChunkBytes/Q8_0.RowBytes(n)) + 5
			ws, xs, ds := typ.RowBytes(n), xt.RowBytes(n), mw+1
			w := make([]byte, mw*ws)
			randomWeights(r, typ, w)
			x := make([]byte, mx*xs)
			for i := range mx {
				if err := QuantizeActivations(xt, x[i*xs:(i+1)*xs], randActivations(r, n)); err != nil {
					t.Fatal(err)
				}
			}
			dst := make([]float32, (mx-1)*ds+mw)
			c.tile(n, w, ws, mw, x, xs, mx, dst, ds)
			for i := range mx {
				for o := range mw {
					if want := c.ref(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*ds+o]) != math.Float32bits(want) {
						t.Fatalf("%d×%d: [%d][%d] = %.9g, Go %.9g", mx, mw, i, o, dst[i*ds+o], want)
					}
				}
			}
		})
	}
}

package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// unpackQ4_0Panels is PackQ4_0Panels's inverse, written from the layout's description.
func unpackQ4_0Panels(dst, src []byte, n int) {
	nb := n / QK
	rb := nb * q4_0Bytes
	for p := 0; p < len(src); p += 8 * rb {
		for b := range nb {
			blk := src[p+b*144 : p+(b+1)*144]
			for r := range 8 {
				row := dst[p+r*rb+b*q4_0Bytes:]
				copy(row[:2], blk[2*r:])
				g := r%2 + 2*(r/4) // 8-byte group of bytes 0-7 among rows 0,1,4,5 or 2,3,6,7
				if r%4 >= 2 {
					g += 8
				}
				copy(row[2:10], blk[16+8*g:])
				copy(row[10:18], blk[16+8*(g+4):])
			}
		}
	}
}

// TestPackQ4_0Panels checks that packing then unpacking gives the rows back.
func TestPackQ4_0Panels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ rows, n int }{{8, 32}, {16, 96}, {24, 2048}} {
		src := make([]byte, tc.rows*Q4_0.RowBytes(tc.n))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		packed, back := make([]byte, len(src)), make([]byte, len(src))
		PackQ4_0Panels(packed, src, tc.n)
		unpackQ4_0Panels(back, packed, tc.n)
		if !slices.Equal(back, src) {
			t.Fatalf("rows %d n %d: unpack(pack(w)) != w", tc.rows, tc.n)
		}
		if tc.rows > 8 && slices.Equal(packed, src) {
			t.Fatalf("rows %d n %d: packing left the rows as they were", tc.rows, tc.n)
		}
	}
}

// TestQ4_0PanelTile compares the level's panel tile with X86RepackTileFunc(Q4_0) on
// the row layout, bit for bit, for batches that fill groups of four partly and fully
// and for extreme scales and values.
func TestQ4_0PanelTile(t *testing.T) {
	f := Q4_0PanelTileFunc()
	if f == nil {
		t.Skipf("level %v has no Q4_0 panel kernel (the row layout is used)", Level())
	}
	testQ4_0PanelTile(t, f, X86RepackTileFunc(Q4_0))
}

// q40PanelCases are the shapes of the panel tile tests.
var q40PanelCases = []struct {
	name      string
	n, mw, mx int
	xgap      int
	extreme   bool
}{
	{"n=32/mw=8/mx=1", 32, 8, 1, 0, false},
	{"n=2048/mw=64/mx=1", 2048, 64, 1, 0, false},
	{"n=96/mw=24/mx=3", 96, 24, 3, 10, false},
	{"n=256/mw=16/mx=4", 256, 16, 4, 0, false},
	{"n=128/mw=40/mx=9", 128, 40, 9, 6, false},
	{"n=160/mw=32/mx=20", 160, 32, 20, 4, false},     // groups of eight, then of four
	{"n=224/mw=8/mx=7", 224, 8, 7, 0, false},         // an odd block count
	{"n=4096/mw=168/mx=10", 4096, 168, 10, 2, false}, // panels in several chunks of tileChunkBytes
	{"n=64/mw=8/mx=5/extreme", 64, 8, 5, 0, true},
}

// testQ4_0PanelTile checks f, a PanelTileFunc, against ref, a tile function over the
// row layout, on q40PanelCases.
func testQ4_0PanelTile(t *testing.T, f PanelTileFunc, ref func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range q40PanelCases {
		t.Run(tc.name, func(t *testing.T) {
			rb := Q4_0.RowBytes(tc.n)
			w := make([]byte, tc.mw*rb)
			for o := range tc.mw {
				v := make([]float32, tc.n)
				for k := range v {
					v[k] = float32(r.NormFloat64())
				}
				if err := Quantize(Q4_0, w[o*rb:(o+1)*rb], v); err != nil {
					t.Fatal(err)
				}
			}
			xs := Q8_0.RowBytes(tc.n) + tc.xgap
			x := make([]byte, tc.mx*xs)
			for i := range tc.mx {
				v := make([]float32, tc.n)
				for k := range v {
					v[k] = float32(r.NormFloat64() * 3)
					if tc.extreme {
						v[k] = float32(math.Copysign(1e4, float64(v[k])))
					}
				}
				if err := QuantizeActivations(Q8_0, x[i*xs:i*xs+Q8_0.RowBytes(tc.n)], v); err != nil {
					t.Fatal(err)
				}
			}
			if tc.extreme { // nibbles 0 and 15 at the largest f16 scale
				for o := range tc.mw {
					for b := range tc.n / QK {
						blk := w[o*rb+b*q4_0Bytes:]
						blk[0], blk[1] = 0xff, 0x7b
						for k := 2; k < q4_0Bytes; k++ {
							blk[k] = 0xf0
						}
					}
				}
			}
			packed := make([]byte, len(w))
			PackQ4_0Panels(packed, w, tc.n)
			ds := tc.mw + 3
			got, want := make([]float32, tc.mx*ds), make([]float32, tc.mx*ds)
			for i := range got {
				got[i], want[i] = -7, -7 // outside the tile: left alone
			}
			f(tc.n, packed, tc.mw, x, xs, tc.mx, got, ds)
			ref(tc.n, w, rb, tc.mw, x, xs, tc.mx, want, ds)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("dst[%d] = %g, row layout %g", i, got[i], want[i])
				}
			}
		})
	}
}

// BenchmarkTilePanel: BenchmarkTileDecode's and BenchmarkTilePrompt's Q4_0 shapes over
// the panel layout, for comparison with their Q4_0 lines.
func BenchmarkTilePanel(b *testing.B) {
	f := Q4_0PanelTileFunc()
	if f == nil {
		b.Skipf("level %v has no Q4_0 panel kernel", Level())
	}
	for _, tc := range []struct {
		name         string
		n, rows, mx  int
		cachedWeight bool
	}{
		{"Decode", 4096, 8192, 1, false},
		{"DecodeCached", 4096, 256, 1, true},
		{"DecodeL2", 4096, 128, 1, true}, // 295 KB: in the L2 cache
		{"Prompt", 4096, 512, 64, true},
		{"PromptSmall", 256, 256, 64, true}, // synth-256's shape
		{"PromptL3", 2048, 4096, 64, false}, // a 1B's shape: 4.7 MB of weights
	} {
		b.Run(tc.name, func(b *testing.B) {
			w, x := benchRows(b, Q4_0, tc.n, tc.rows, tc.mx)
			packed := make([]byte, len(w))
			PackQ4_0Panels(packed, w, tc.n)
			dst := make([]float32, tc.rows*tc.mx)
			xs := Q8_0.RowBytes(tc.n)
			cpuLoop(b, int64(len(w)*tc.mx), func() { f(tc.n, packed, tc.rows, x, xs, tc.mx, dst, tc.rows) })
		})
	}
}

// BenchmarkPackQ4_0Panels: packing a 2048 × 2048 matrix (bytes packed per second).
func BenchmarkPackQ4_0Panels(b *testing.B) {
	const n, rows = 2048, 2048
	src := make([]byte, rows*Q4_0.RowBytes(n))
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		PackQ4_0Panels(dst, src, n)
	}
}

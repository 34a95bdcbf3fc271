package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQ8XTable compares the assembly table of the Q4_0 8-row kernels with the Go one
// on random rows and on rows of extreme values (all −128, all 127), for batches that
// fill groups of four partly and fully.
func TestQ8XTable(t *testing.T) {
	if !hasAVX2 {
		t.Skip("q8XRowAVX2 needs AVX2, which this build level or CPU does not allow")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name   string
		nb, mx int
		fill   func(b []byte)
	}{
		{"random/nb=1/mx=1", 1, 1, nil},
		{"random/nb=64/mx=1", 64, 1, nil},
		{"random/nb=7/mx=5", 7, 5, nil},
		{"random/nb=3/mx=9", 3, 9, nil},
		{"min/nb=4/mx=4", 4, 4, func(b []byte) { b[0] = 0x80 }},
		{"max/nb=4/mx=3", 4, 3, func(b []byte) { b[0] = 0x7f }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs := tc.nb*q8_0Bytes + 6 // rows with a gap, as a strided batch has
			x := make([]byte, tc.mx*xs)
			for i := range x {
				x[i] = byte(r.Uint32())
				if tc.fill != nil && i%xs < tc.nb*q8_0Bytes && i%xs%q8_0Bytes >= 2 {
					tc.fill(x[i : i+1])
				}
			}
			n := (tc.mx + 3) / 4 * tc.nb * 8
			got, want := make([]uint32, n), make([]uint32, n)
			for i := range got {
				got[i] = 0xdeadbeef // q8XTable must clear what it does not write
			}
			q8XTable(got, tc.nb, x, xs, tc.mx)
			q8XTableGo(want, tc.nb, x, xs, tc.mx)
			if !slices.Equal(got, want) {
				t.Fatalf("q8XTable = %v, Go %v", got, want)
			}
		})
	}
}

// sumI8x32 is the sum of 32 int8 values, by SWAR on the values biased to unsigned.
func sumI8x32(b *[32]byte) int32 {
	var s uint64
	for k := 0; k < 32; k += 8 {
		v := le64(b[k:]) ^ swarBias
		s += v&swarLo16 + (v>>8)&swarLo16 // four 16-bit lanes, each ≤ 4·2·255
	}
	return int32((s*swarSum4)>>48) - 32*128
}

// q8XTableGo is q8XTable in Go, the reference its tests compare with.
func q8XTableGo(tab []uint32, nb int, x []byte, xStride, mx int) {
	clear(tab)
	for i := range mx {
		g, j := i/4, i%4
		for b := range nb {
			xb := (*[q8_0Bytes]byte)(x[i*xStride+b*q8_0Bytes:])
			t := (*[8]uint32)(tab[(g*nb+b)*8:])
			t[j] = uint32(8 * sumI8x32((*[32]byte)(xb[2:])))
			t[4+j] = math.Float32bits(halfAt(xb[:]))
		}
	}
}

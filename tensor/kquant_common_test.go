package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestKNearestInt(t *testing.T) {
	tests := []struct {
		in   float32
		want int32
	}{
		{0, 0}, {0.49999997, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {3.5, 4},
		{-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {-3.6, -4}, {31.49, 31},
		{-127.5, -128}, {4194303, 4194303}, {-4194303, -4194303},
	}
	for _, tt := range tests {
		if got := kNearestInt(tt.in); got != tt.want {
			t.Errorf("kNearestInt(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 100000 {
		f := float32((r.Float64()*2 - 1) * 4194303)
		if r.IntN(2) == 0 {
			f /= 65536
		}
		if got, want := kNearestInt(f), int32(math.RoundToEven(float64(f))); got != want {
			t.Fatalf("kNearestInt(%v) = %d, want %d", f, got, want)
		}
	}
}

func TestScaleMinK4RoundTrip(t *testing.T) {
	var ls, lm [8]uint8
	for j := range 8 {
		ls[j], lm[j] = uint8(63-7*j), uint8(5*j+3)
	}
	var q [12]byte
	putScaleMinK4(q[:], &ls, &lm)
	sc, m := unpackScaleMinK4(q[:])
	for j := range 8 {
		s1, m1 := scaleMinK4(j, q[:])
		if s1 != ls[j] || m1 != lm[j] || sc[j] != int32(ls[j]) || m[j] != int32(lm[j]) {
			t.Errorf("sub-block %d: scaleMinK4 = (%d, %d), unpack = (%d, %d), want (%d, %d)",
				j, s1, m1, sc[j], m[j], ls[j], lm[j])
		}
	}
}

func TestQ3KScaleRoundTrip(t *testing.T) {
	// Pack the way quantize_row_q3_K_ref does and read back every 6-bit scale.
	var s [12]byte
	for j := range 16 {
		l := byte(4*j + 1) // 1..61, all bit patterns of both nibbles
		if j < 8 {
			s[j] = l & 0xF
		} else {
			s[j-8] |= (l & 0xF) << 4
		}
		s[j%4+8] |= (l >> 4) << (2 * uint(j/4))
	}
	for j := range 16 {
		if got := q3KScale(s[:], j); got != int32(4*j+1) {
			t.Errorf("q3KScale(%d) = %d, want %d", j, got, 4*j+1)
		}
	}
}

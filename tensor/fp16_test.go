package tensor

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/x448/float16"
)

func TestF16RoundTripExact(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f != f {
			continue // NaNs are checked in TestF32ToF16Special
		}
		if got := F32ToF16(f); got != uint16(h) {
			t.Fatalf("F32ToF16(F16ToF32(%#04x) = %g) = %#04x", h, f, got)
		}
		if want := float16.Frombits(uint16(h)).Float32(); math.Float32bits(f) != math.Float32bits(want) {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, f, want)
		}
	}
}

// TestF32ToF16Rounding checks the ggml float trick against x448/float16's integer
// round-to-nearest-even on random and boundary float32 values.
func TestF32ToF16Rounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(u uint32) {
		f := math.Float32frombits(u)
		if f != f {
			return
		}
		if got, want := F32ToF16(f), float16.Fromfloat32(f).Bits(); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", f, u, got, want)
		}
	}
	for range 2_000_000 {
		check(r.Uint32())
	}
	// Values near half-precision ties and the subnormal/overflow boundaries.
	for h := 0; h < 1<<15; h += 7 {
		u := math.Float32bits(F16ToF32(uint16(h)))
		for _, d := range []uint32{0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF} {
			check(u + d)
			check(u - d)
			check(u | 1<<31 + d)
		}
	}
}

func TestF32ToF16Special(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3C00},
		{-2, 0xC000},
		{65504, 0x7BFF},
		{65520, 0x7C00}, // rounds up to infinity
		{float32(math.Inf(-1)), 0xFC00},
		{0x1p-24, 0x0001},   // smallest subnormal
		{0x1p-25, 0x0000},   // tie to even: zero
		{0x1.8p-25, 0x0001}, // above the tie
		{float32(math.NaN()), 0x7E00},
		{math.Float32frombits(0xFF800001), 0xFE00}, // signalling NaN, negative
	}
	for _, tc := range tests {
		if got := F32ToF16(tc.in); got != tc.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

// bf16Nearest is an independent round-to-nearest-even to bfloat16 in float64.
func bf16Nearest(u uint32) uint16 {
	lo := u &^ 0xFFFF
	hi := lo + 0x10000
	f := float64(math.Float32frombits(u))
	dl := math.Abs(f - float64(math.Float32frombits(lo)))
	dh := math.Abs(f - float64(math.Float32frombits(hi)))
	if dl < dh || dl == dh && lo>>16&1 == 0 {
		return uint16(lo >> 16)
	}
	return uint16(hi >> 16)
}

func TestBF16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := BF16ToF32(uint16(h))
		if f != f {
			if got := F32ToBF16(f); got != uint16(h)|0x40 {
				t.Fatalf("F32ToBF16(NaN %#04x) = %#04x, want it quieted", h, got)
			}
			continue
		}
		if got := F32ToBF16(f); got != uint16(h) {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, got)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2_000_000 {
		u := r.Uint32()
		if u&0x7FFFFFFF >= 0x7F7F8000 {
			continue // NaN, or rounds to infinity: bf16Nearest has no upper neighbour
		}
		if got, want := F32ToBF16(math.Float32frombits(u)), bf16Nearest(u); got != want {
			t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
	if got := F32ToBF16(math.MaxFloat32); got != 0x7F80 {
		t.Errorf("F32ToBF16(MaxFloat32) = %#04x, want +Inf 0x7f80", got)
	}
}

// f32ToF16Trick is ggml_compute_fp32_to_fp16 as ggml writes it (the float trick of
// Maratyszcza/FP16: scaling by 2^112 then 2^-110 rounds the mantissa in hardware), the
// model F32ToF16's integer version is checked against.
func f32ToF16Trick(f float32) uint16 {
	const scaleToInf, scaleToZero float32 = 0x1p+112, 0x1p-110
	base := float32(float32(abs32(f)*scaleToInf) * scaleToZero)
	w := math.Float32bits(f)
	shl1w := w + w
	sign := w & 0x80000000
	bias := shl1w & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits(bias>>1+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantBits := bits & 0x00000FFF
	if shl1w > 0xFF000000 {
		return uint16(sign>>16) | 0x7E00
	}
	return uint16(sign>>16) | uint16(expBits+mantBits)
}

// TestF32ToF16MatchesGgml compares F32ToF16 with ggml's float trick on every float32 of
// the subnormal and overflow boundary ranges and on a stride through all the others
// (with INFER_EXHAUSTIVE=1 in the environment: on all 2^32, about 20 s).
func TestF32ToF16MatchesGgml(t *testing.T) {
	check := func(u uint32) {
		f := math.Float32frombits(u)
		if got, want := F32ToF16(f), f32ToF16Trick(f); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, ggml %#04x", f, u, got, want)
		}
	}
	step := uint64(61)
	if os.Getenv("INFER_EXHAUSTIVE") == "1" {
		step = 1
	}
	for u := uint64(0); u < 1<<32; u += step {
		check(uint32(u))
	}
	for _, sign := range []uint32{0, 1 << 31} {
		for u := uint32(0x33000000) - 4096; u < 0x38800000+4096; u++ { // 2^-25 .. 2^-14
			check(sign | u)
		}
		for u := uint32(0x477fe000) - 4096; u < 0x47800000+4096; u++ { // 65504 .. 2^16
			check(sign | u)
		}
		for u := uint32(0x7f800000) - 4096; u < 0x7f800000+4096; u++ { // Inf, NaNs
			check(sign | u)
		}
	}
}

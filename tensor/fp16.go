package tensor

import "math"

// F16ToF32 converts an IEEE half-precision value (its bits) to float32, exactly, like
// ggml_compute_fp16_to_fp32.
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToF16 converts f to IEEE half precision, rounding to nearest even, overflowing to
// infinity and turning every NaN into the quiet NaN 0x7E00 (with f's sign), bit for bit
// like ggml_compute_fp32_to_fp16 (checked for every float32 in fp16_test.go). Normal
// halves are rounded in the integer bits (the carry of a round-up moves into the
// exponent, up to infinity); subnormal ones by one float32 addition of 0.5, whose ulp is
// the subnormal step 2^-24.
func F32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	a := u & 0x7fffffff
	h := (a + 0xc8000fff + a>>13&1) >> 13 // normal: -112 on the exponent, rounded
	if a < 0x38800000 {                   // below 2^-14: subnormal half or zero
		h = math.Float32bits(math.Float32frombits(a)+0.5) - 0x3f000000
	}
	if a >= 0x47800000 { // |f| ≥ 2^16, Inf, NaN
		h = 0x7c00
		if a > 0x7f800000 {
			h = 0x7e00
		}
	}
	return uint16(u>>16&0x8000 | h)
}

// F16Values is the table F16ToF32 reads: element h is the float32 value of the half
// with bits h. Callers must not write to it. A loop that converts many halves can hold
// it in a register (F16ToF32 reloads it at every call).
func F16Values() *[1 << 16]float32 { return f16Table }

// BF16ToF32 converts a bfloat16 value (its bits) to float32: the bits shifted up by 16.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts f to bfloat16 like ggml_compute_fp32_to_bf16: round to nearest
// even, subnormals kept, NaNs truncated and forced quiet.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

// abs32 is fabsf: f with its sign bit cleared.
func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// f16Table maps every half-precision bit pattern to its float32 value; it is built once
// and never written again.
var f16Table = buildF16Table()

func buildF16Table() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for h := range t {
		t[h] = f16ToF32Compute(uint16(h))
	}
	return t
}

// f16ToF32Compute is ggml_compute_fp16_to_fp32: exact, NaN payloads kept.
func f16ToF32Compute(h uint16) float32 {
	w := uint32(h) << 16
	sign := w & 0x80000000
	twoW := w + w

	const expOffset = uint32(0xE0) << 23
	const expScale float32 = 0x1p-112
	normalized := math.Float32frombits(twoW>>4+expOffset) * expScale

	const magicMask = uint32(126) << 23
	const magicBias float32 = 0.5
	denormalized := math.Float32frombits(twoW>>17|magicMask) - magicBias

	if twoW < 1<<27 {
		return math.Float32frombits(sign | math.Float32bits(denormalized))
	}
	return math.Float32frombits(sign | math.Float32bits(normalized))
}

// halfAt reads the little-endian half-precision value at b[0:2] as float32.
func halfAt(b []byte) float32 {
	_ = b[1]
	return f16Table[uint16(b[0])|uint16(b[1])<<8]
}

// putHalf stores f as a little-endian half-precision value at b[0:2].
func putHalf(b []byte, f float32) {
	h := F32ToF16(f)
	b[0], b[1] = byte(h), byte(h>>8)
}

package synth

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/infergo/infer/tensor"
)

// Sigma is the target standard deviation of generated weights, that of a trained
// LLaMA's linear layers. Every block generator below picks its scale range so that
// the dequantized elements have about this spread around zero.
const Sigma = 0.02

// fillFunc fills dst, a whole number of blocks, with random data.
type fillFunc func(dst []byte, rng *rand.Rand)

// fillers is indexed by DType. Each quantized filler writes its scales (f16, in a
// range that keeps the element spread near Sigma) and random quants; block layouts
// follow ggml-common.h. The comment on each gives the element formula and the RMS of
// the quant factor that the scale divides Sigma by.
var fillers = [...]fillFunc{
	tensor.F32:  fillF32,
	tensor.F16:  fillF16,
	tensor.BF16: fillBF16,
	tensor.Q4_0: fillQ4_0,
	tensor.Q4_1: fillQ4_1,
	tensor.Q5_0: fillQ5_0,
	tensor.Q5_1: fillQ5_1,
	tensor.Q8_0: fillQ8_0,
	tensor.Q2_K: fillQ2_K,
	tensor.Q3_K: fillQ3_K,
	tensor.Q4_K: fillQ4_K,
	tensor.Q5_K: fillQ5_K,
	tensor.Q6_K: fillQ6_K,
}

// filler returns the block generator of t.
func filler(t tensor.DType) (fillFunc, error) {
	if int(t) < len(fillers) && fillers[t] != nil {
		return fillers[t], nil
	}
	return nil, fmt.Errorf("synth: no random generator for %v", t)
}

// randBytes fills b with random bytes.
func randBytes(b []byte, rng *rand.Rand) {
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, rng.Uint64())
		b = b[8:]
	}
	if len(b) > 0 {
		var t [8]byte
		binary.LittleEndian.PutUint64(t[:], rng.Uint64())
		copy(b, t[:])
	}
}

// uniform returns a float32 uniform in [-a, a).
func uniform(rng *rand.Rand, a float32) float32 {
	return a * (2*float32(rng.Uint32()>>8)/(1<<24) - 1)
}

// putF16 stores x as an IEEE half at b[0:2].
func putF16(b []byte, x float32) {
	binary.LittleEndian.PutUint16(b, tensor.F32ToF16(x))
}

// scale returns a block scale: d0 times a factor uniform in [0.75, 1.25).
func scale(rng *rand.Rand, d0 float32) float32 {
	return d0 * (0.75 + 0.5*float32(rng.Uint32()>>8)/(1<<24))
}

// uniformA is the half-width of a uniform distribution with standard deviation Sigma.
var uniformA = float32(Sigma * math.Sqrt(3))

func fillF32(dst []byte, rng *rand.Rand) {
	for i := 0; i+4 <= len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(uniform(rng, uniformA)))
	}
}

func fillF16(dst []byte, rng *rand.Rand) {
	for i := 0; i+2 <= len(dst); i += 2 {
		putF16(dst[i:], uniform(rng, uniformA))
	}
}

func fillBF16(dst []byte, rng *rand.Rand) {
	for i := 0; i+2 <= len(dst); i += 2 {
		binary.LittleEndian.PutUint16(dst[i:], tensor.F32ToBF16(uniform(rng, uniformA)))
	}
}

// fillNorm writes F32 RMSNorm weights, uniform in [0.95, 1.05).
func fillNorm(dst []byte, rng *rand.Rand) {
	for i := 0; i+4 <= len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(1+uniform(rng, 0.05)))
	}
}

// fillBias writes F32 biases, uniform in [-0.1, 0.1).
func fillBias(dst []byte, rng *rand.Rand) {
	for i := 0; i+4 <= len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(uniform(rng, 0.1)))
	}
}

// blocks calls f on each block of size n in dst.
func blocks(dst []byte, n int, f func(b []byte)) {
	for i := 0; i+n <= len(dst); i += n {
		f(dst[i : i+n])
	}
}

// Q4_0 {d; qs[16]}: x = d·(q-8), q in 0..15: RMS 4.64.
func fillQ4_0(dst []byte, rng *rand.Rand) {
	blocks(dst, 18, func(b []byte) {
		putF16(b, scale(rng, Sigma/4.64))
		randBytes(b[2:], rng)
	})
}

// Q4_1 {d; m; qs[16]}: x = d·q + m with m = -7.5·d: RMS 4.61.
func fillQ4_1(dst []byte, rng *rand.Rand) {
	blocks(dst, 20, func(b []byte) {
		d := scale(rng, Sigma/4.61)
		putF16(b, d)
		putF16(b[2:], -7.5*d)
		randBytes(b[4:], rng)
	})
}

// Q5_0 {d; qh[4]; qs[16]}: x = d·(q-16), q in 0..31: RMS 9.25.
func fillQ5_0(dst []byte, rng *rand.Rand) {
	blocks(dst, 22, func(b []byte) {
		putF16(b, scale(rng, Sigma/9.25))
		randBytes(b[2:], rng)
	})
}

// Q5_1 {d; m; qh[4]; qs[16]}: x = d·q + m with m = -15.5·d: RMS 9.23.
func fillQ5_1(dst []byte, rng *rand.Rand) {
	blocks(dst, 24, func(b []byte) {
		d := scale(rng, Sigma/9.23)
		putF16(b, d)
		putF16(b[2:], -15.5*d)
		randBytes(b[4:], rng)
	})
}

// Q8_0 {d; qs[32] int8}: x = d·q, q in -128..127: RMS 73.9.
func fillQ8_0(dst []byte, rng *rand.Rand) {
	blocks(dst, 34, func(b []byte) {
		putF16(b, scale(rng, Sigma/73.9))
		randBytes(b[2:], rng)
	})
}

package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// Random rows for the tests that compare the kernels of a level with the Go code.

// halfFields lists the byte offsets of the f16 fields of a block of each type.
var halfFields = map[DType][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0}, Q8_1: {0, 2},
	Q2_K: {q2KD, q2KD + 2}, Q3_K: {q3KD}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {q6KD},
}

// randHalf is a random finite half of magnitude below 4, zero or subnormal at times.
func randHalf(r *rand.Rand) uint16 {
	switch r.IntN(16) {
	case 0:
		return 0
	case 1:
		return uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15 // subnormal
	}
	return F32ToF16(float32(r.NormFloat64()))
}

// randomRow fills a row of n elements of type t with random bytes: any quant, any
// bsums, random finite scales; float rows get random values of any finite magnitude or
// normal ones.
func randomRow(r *rand.Rand, t DType, n int, wild bool) []byte {
	b := make([]byte, t.RowBytes(n))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	switch t {
	case F32:
		for i := 0; i < n; i++ {
			v := float32(r.NormFloat64())
			if wild {
				if v = math.Float32frombits(r.Uint32()); v != v {
					v = 0
				}
			}
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case F16:
		for i := 0; i < n; i++ {
			h := randHalf(r)
			if wild {
				if h = uint16(r.Uint32()); h&0x7c00 == 0x7c00 {
					h &^= 0x4000
				}
			}
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
	case BF16:
		for i := 0; i < n; i++ {
			h := F32ToBF16(float32(r.NormFloat64()))
			if wild {
				if h = uint16(r.Uint32()); h&0x7f80 == 0x7f80 {
					h &^= 0x4000
				}
			}
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
	case Q8_K:
		for i := 0; i < n/QKK; i++ {
			binary.LittleEndian.PutUint32(b[i*q8KBytes:], math.Float32bits(float32(r.NormFloat64())))
		}
	default:
		bb := t.BlockBytes()
		for i := 0; i < n/t.BlockSize(); i++ {
			for _, off := range halfFields[t] {
				binary.LittleEndian.PutUint16(b[i*bb+off:], randHalf(r))
			}
		}
	}
	return b
}

func quantizeOrFatal(t *testing.T, typ DType, dst []byte, src []float32) {
	t.Helper()
	if err := Quantize(typ, dst, src); err != nil {
		t.Fatal(err)
	}
}

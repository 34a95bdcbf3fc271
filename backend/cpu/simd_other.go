//go:build !amd64

package cpu

import "github.com/infergo/infer/tensor"

func vecDotF32Fast(a, b []float32, n int) (float32, bool) { return 0, false }

func sgemmF32Fast(a, b []float32) (float32, bool) { return 0, false }

func vecDotF16Fast(a, b []uint16) (float32, bool) { return 0, false }

func sgemmF16Fast(a, b []uint16) (float32, bool) { return 0, false }

// hasAVX512 is false off amd64: the Go kernels run.
const hasAVX512 = false

// The assembly kernels are never called off amd64 (hasAVX512 is false).

func dotF16Seq(k *uint16, q *float32, n int) float64 { panic("cpu: no assembly kernels") }

func madF16(acc, v *uint16, s float32, n int) { panic("cpu: no assembly kernels") }

func scaleF16(acc *uint16, s float32, n int) { panic("cpu: no assembly kernels") }

func swigluF32(dst, gate, up *float32, n8 int) { panic("cpu: no assembly kernels") }

func spinPause() {}

func fmaRowF16(acc *float32, v *uint16, p float32, n int) { panic("cpu: no assembly kernels") }

func scores8F16(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32) {
	panic("cpu: no assembly kernels")
}

// avx2Tile is nil off amd64: there are no AVX2 kernels.
func avx2Tile(wt tensor.DType, sgemm bool) tileFunc { return nil }

const useAVX2 = false

func scoresF16SeqAVX2(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32) {
	panic("cpu: no assembly kernels")
}

func fmaRowF16AVX2(acc *float32, v *uint16, p float32, n int) { panic("cpu: no assembly kernels") }

func scores8F16AVX2(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32) {
	panic("cpu: no assembly kernels")
}

func swigluF32AVX2(dst, gate, up *float32, n8 int) { panic("cpu: no assembly kernels") }

func softmaxExpAVX2(s *float32, n int, m float32) float64 { panic("cpu: no assembly kernels") }

func expfRowAVX2(dst, src *float32, n4 int) bool { panic("cpu: no assembly kernels") }

func chunkAccF16AVX2(acc, v *uint16, vstride int, vs, ms *float32, nkeys, hd int) {
	panic("cpu: no assembly kernels")
}

func f32ToF16RowAVX2(dst *uint16, src *float32, n8 int) bool { panic("cpu: no assembly kernels") }

func roundF16RowAVX2(dst, src *float32, n8 int) bool { panic("cpu: no assembly kernels") }

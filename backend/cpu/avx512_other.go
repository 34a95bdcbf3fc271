//go:build !amd64

package cpu

import "github.com/infergo/infer/tensor"

// avx512Tile is nil off amd64: there are no AVX-512 kernels.
func avx512Tile(wt tensor.DType, sgemm bool) tileFunc { return nil }

// The AVX-512 kernels are never called off amd64 (hasAVX512 is false).

func chunkMaxAVX512(s *float32, raised *bool, n int, scale float32) { panic("cpu: no AVX-512 kernels") }

func chunkMax4AVX512(s *float32, raised *bool, n int, scale float32) {
	panic("cpu: no AVX-512 kernels")
}

func scores4x8F16AVX512(k *uint16, ks int, offs *[4]int, q *[32]float32, nkeys int, s *float32) {
	panic("cpu: no AVX-512 kernels")
}

func expfRowAVX512(dst, src *float32, n int) { panic("cpu: no AVX-512 kernels") }

func softmaxExpAVX512(s *float32, n int, m float32) float64 { panic("cpu: no AVX-512 kernels") }

func swigluF32AVX512(dst, gate, up *float32, n16 int) { panic("cpu: no AVX-512 kernels") }

func scoresTileF16AVX512(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32) {
	panic("cpu: no AVX-512 kernels")
}

func rmsScaleRowAVX512(dst, x, w *float32, scale float32, n int) { panic("cpu: no AVX-512 kernels") }

func addRowAVX512(dst, x *float32, n int) { panic("cpu: no AVX-512 kernels") }

func rotatePairsAVX512(x, cache *float32, n int) { panic("cpu: no AVX-512 kernels") }

func tileMaxAVX512(s *float32, n int) (m float32, ok bool) { panic("cpu: no AVX-512 kernels") }

func transposeKF16AVX512(k *uint16, ks int, hd, nkeys int, dst *float32, ds int) {
	panic("cpu: no AVX-512 kernels")
}

func scoresTileF32TAVX512(kt *float32, kts int, q *float32, hd, nkeys int, scale float32, s *float32) {
	panic("cpu: no AVX-512 kernels")
}

func accTileF16AVX512(acc *float32, v *uint16, vs int, p *float32, nkeys, hd int) {
	panic("cpu: no AVX-512 kernels")
}

func vecDotF16F32RowsAVX512(w *uint16, ws int, x *float32, n, rows int, dst *float32) {
	panic("cpu: no AVX-512 kernels")
}

func scoresF16x8AVX512(k *uint16, ks int, q *float32, hd, n8 int, s *float32) {
	panic("cpu: no AVX-512 kernels")
}

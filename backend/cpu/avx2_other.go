//go:build !amd64

package cpu

import "github.com/infergo/infer/tensor"

// useAVX2 is false off amd64: the AVX2 kernels of avx2_amd64.s are never called.
const useAVX2 = false

// avx2Tile is nil off amd64: there are no AVX2 kernels.
func avx2Tile(wt tensor.DType, sgemm bool) tileFunc { return nil }

func sgemm2x2F32AVX2(w *float32, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int) {
	panic("cpu: no AVX2 kernels")
}

func sgemm2x2F16AVX2(w *uint16, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int) {
	panic("cpu: no AVX2 kernels")
}

func sgemmF32BlocksAVX2(a, b *float32, nblk int) float32 { panic("cpu: no AVX2 kernels") }

func sgemmF16BlocksAVX2(a, b *uint16, nblk int) float32 { panic("cpu: no AVX2 kernels") }

func vecDotF32RowsAVX2(w *float32, ws int, x *float32, n, rows int, dst *float32) {
	panic("cpu: no AVX2 kernels")
}

func vecDotF16RowsAVX2(w *uint16, ws int, x *uint16, n, rows int, dst *float32) {
	panic("cpu: no AVX2 kernels")
}

func sgemmF16F32BlocksAVX2(a *uint16, b *float32, nblk int) float32 { panic("cpu: no AVX2 kernels") }

func vecDotF16F32RowsAVX2(w *uint16, ws int, x *float32, n, rows int, dst *float32) {
	panic("cpu: no AVX2 kernels")
}

func f32ToF16RowAVX2(dst *uint16, src *float32, n8 int) bool { panic("cpu: no AVX2 kernels") }

func roundF16RowAVX2(dst, src *float32, n8 int) bool { panic("cpu: no AVX2 kernels") }

func fmaRowF16AVX2(acc *float32, v *uint16, p float32, n int) { panic("cpu: no AVX2 kernels") }

func scores8F16AVX2(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32) {
	panic("cpu: no AVX2 kernels")
}

func swigluF32AVX2(dst, gate, up *float32, n8 int) { panic("cpu: no AVX2 kernels") }

func softmaxExpAVX2(s *float32, n int, m float32) float64 { panic("cpu: no AVX2 kernels") }

func expfRowAVX2(dst, src *float32, n4 int) bool { panic("cpu: no AVX2 kernels") }

func chunkAccF16AVX2(acc, v *uint16, vstride int, e *float32, raised *bool, nkeys, hd int) float32 {
	panic("cpu: no AVX2 kernels")
}

func chunkAccF16x4AVX2(acc, v *uint16, vstride int, offs *[4]int, e *float32, raised *bool, nkeys int, sums *[4]float32) {
	panic("cpu: no AVX2 kernels")
}

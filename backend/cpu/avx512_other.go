//go:build !amd64

package cpu

import "github.com/infergo/infer/tensor"

// avx512Tile is nil off amd64: there are no AVX-512 kernels.
func avx512Tile(wt tensor.DType, sgemm bool) tileFunc { return nil }

// The AVX-512 kernels are never called off amd64 (hasAVX512 is false).

func chunkMaxAVX512(s *float32, raised *bool, n int, scale float32) { panic("cpu: no AVX-512 kernels") }

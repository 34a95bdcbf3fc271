//go:build !amd64

package cpu

import "github.com/infergo/infer/tensor"

// avx512Tile is nil off amd64: there are no AVX-512 kernels.
func avx512Tile(wt tensor.DType, sgemm bool) tileFunc { return nil }

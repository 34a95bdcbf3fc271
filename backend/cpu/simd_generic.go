//go:build !amd64 && !arm64

package cpu

import "github.com/infergo/infer/tensor"

// Without assembly kernels, simd.go's Go definitions run.

func vecDotF32Fast(a, b []float32, n int) (float32, bool) { return 0, false }

func sgemmF32Fast(a, b []float32) (float32, bool) { return 0, false }

// neonTile is nil off arm64.
func neonTile(wt tensor.DType, sgemm bool) tileFunc { return nil }

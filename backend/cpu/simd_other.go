//go:build !amd64

package cpu

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

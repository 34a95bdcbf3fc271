//go:build !amd64

package cpu

func vecDotF16Fast(a, b []uint16) (float32, bool) { return 0, false }

func sgemmF16Fast(a, b []uint16) (float32, bool) { return 0, false }

// hasAVX512 is false off amd64: the Go kernels run.
const hasAVX512 = false

// The assembly kernels are never called off amd64 (hasAVX512 is false).

func madF16(acc, v *uint16, s float32, n int) { panic("cpu: no assembly kernels") }

func scaleF16(acc *uint16, s float32, n int) { panic("cpu: no assembly kernels") }

func spinPause() {}

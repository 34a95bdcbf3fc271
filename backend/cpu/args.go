package cpu

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// arg returns b as a buffer of this device, panicking (programmer error) when it is not
// one or when want is not nil and b's type is not among want.
func (d *Device) arg(op, name string, b backend.Buffer, want ...tensor.DType) *Buffer {
	cb, ok := b.(*Buffer)
	if !ok || cb.dev != d {
		panic(fmt.Sprintf("cpu: %s: %s is not a buffer of this device", op, name))
	}
	if len(want) == 0 {
		return cb
	}
	for _, t := range want {
		if cb.dt == t {
			return cb
		}
	}
	panic(fmt.Sprintf("cpu: %s: %s has type %v, want %s", op, name, cb.dt, typeList(want)))
}

// typeList formats types without letting the slice escape, so that arg's variadic
// argument stays on the caller's stack.
func typeList(ts []tensor.DType) string {
	var sb strings.Builder
	for i, t := range ts {
		if i > 0 {
			sb.WriteString(" or ")
		}
		sb.WriteString(t.String())
	}
	return sb.String()
}

// shape panics unless b is rows × cols.
func shape(op, name string, b *Buffer, rows, cols int) {
	if b.rows != rows || b.cols != cols {
		panic(fmt.Sprintf("cpu: %s: %s is (%d, %d), want (%d, %d)", op, name, b.rows, b.cols, rows, cols))
	}
}

// int32s views b (little-endian int32 data, 4-byte aligned) as []int32.
func int32s(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

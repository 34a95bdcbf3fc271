//go:build cgo

package cuda

import (
	"errors"
	"unsafe"
)

// WithStream runs fn with the device's context current on a locked OS thread, after
// every kernel enqueued so far was launched, and passes it the device's stream (a
// CUstream): the hook through which NCCL (backend/nccl) enqueues a send or receive in
// the device's order. fn's error is returned, not kept for Sync.
func (d *Device) WithStream(fn func(stream unsafe.Pointer) error) error {
	return d.do(func() error {
		if d.closed {
			return errors.New("cuda: device closed")
		}
		return fn(unsafe.Pointer(d.stream))
	})
}

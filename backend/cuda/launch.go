package cuda

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// maxArgBytes bounds the packed parameters of one launch.
const maxArgBytes = 256

// args packs kernel parameters the way the compiler lays them out: each at the next
// multiple of its own size (pointers and 64-bit integers 8, int and float 4).
type args struct {
	b [maxArgBytes]byte
	n int
}

func (a *args) align(size int) int {
	off := (a.n + size - 1) &^ (size - 1)
	if off+size > len(a.b) {
		panic("cuda: kernel parameters exceed 256 bytes")
	}
	a.n = off + size
	return off
}

// ptr appends a device pointer (CUdeviceptr, 8 bytes).
func (a *args) ptr(p uint64) *args { return a.u64(p) }

// u64 appends a 64-bit integer.
func (a *args) u64(v uint64) *args {
	binary.LittleEndian.PutUint64(a.b[a.align(8):], v)
	return a
}

// i32 appends a 32-bit int.
func (a *args) i32(v int) *args {
	if v != int(int32(v)) {
		panic(fmt.Sprintf("cuda: kernel int parameter %d overflows int32", v))
	}
	binary.LittleEndian.PutUint32(a.b[a.align(4):], uint32(int32(v)))
	return a
}

// f32 appends a float.
func (a *args) f32(v float32) *args {
	binary.LittleEndian.PutUint32(a.b[a.align(4):], math.Float32bits(v))
	return a
}

// bytes returns the packed parameters.
func (a *args) bytes() []byte { return a.b[:a.n] }

// argBuffer is C memory the packed parameters are copied into before cuLaunchKernel, so
// that no Go pointer is passed to C. The driver copies the parameters at launch (and at
// capture), so one buffer per device is enough.
type argBuffer struct{ p unsafe.Pointer }

func newArgBuffer() (*argBuffer, error) {
	p := C.malloc(maxArgBytes)
	if p == nil {
		return nil, fmt.Errorf("cuda: malloc of the kernel parameter buffer failed")
	}
	return &argBuffer{p}, nil
}

func (b *argBuffer) close() error {
	if b != nil && b.p != nil {
		C.free(b.p)
		b.p = nil
	}
	return nil
}

// dim3 is a grid or block shape.
type dim3 struct{ x, y, z int }

// launch enqueues kernel entry on the device stream; it runs under do.
func (d *Device) launch(entry string, grid, block dim3, a *args) error {
	return d.launchOn(d.stream, entry, grid, block, a)
}

// launchOn enqueues kernel entry on stream; it runs under do.
func (d *Device) launchOn(stream C.CUstream, entry string, grid, block dim3, a *args) error {
	return d.launchShared(stream, entry, grid, block, 0, a)
}

// launchShared is launchOn giving the kernel smem bytes of dynamic shared memory.
func (d *Device) launchShared(stream C.CUstream, entry string, grid, block dim3, smem int, a *args) error {
	f, ok := d.funcs[entry]
	if !ok {
		return fmt.Errorf("kernel %s: not loaded", entry)
	}
	if grid.x <= 0 || grid.y <= 0 || grid.z <= 0 {
		return nil // empty batch: nothing to do
	}
	p := a.bytes()
	copy(unsafe.Slice((*byte)(d.args.p), maxArgBytes), p)
	withPDL := d.pdl(entry)
	r := cuLaunch(f, grid, block, smem, stream, d.args.p, len(p), withPDL)
	op := "cuLaunchKernel"
	if withPDL {
		op = "cuLaunchKernelEx"
	}
	if err := check(op, r); err != nil {
		return fmt.Errorf("kernel %s grid %v block %v: %w", entry, grid, block, err)
	}
	return nil
}

// run enqueues one kernel and keeps any failure for Sync: the body of every kernel method.
func (d *Device) run(entry string, grid, block dim3, a *args) {
	d.enqueue(entry, func() error { return d.launch(entry, grid, block, a) })
}

// ceilDiv is ⌈a/b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

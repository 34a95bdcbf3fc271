//go:build cgo

package cuda

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Buffer is a (rows, cols) tensor of one DType in device memory: rows are contiguous,
// row r at Ptr() + r·DType().RowBytes(Cols()). Views from Slice share the allocation.
type Buffer struct {
	dev        *Device
	alloc      *allocation // owner of the memory; views share it
	dt         tensor.DType
	rows, cols int
	ptr        uint64 // device address of row 0
}

var _ backend.Buffer = (*Buffer)(nil)

// DType is the element type.
func (b *Buffer) DType() tensor.DType { return b.dt }

// Rows is the number of rows.
func (b *Buffer) Rows() int { return b.rows }

// Cols is the number of elements per row.
func (b *Buffer) Cols() int { return b.cols }

// Device is the device holding the buffer.
func (b *Buffer) Device() backend.Device { return b.dev }

// Ptr is the device address of row 0 (a CUdeviceptr).
func (b *Buffer) Ptr() uint64 { return b.ptr }

// Bytes is the size of the buffer's rows in bytes.
func (b *Buffer) Bytes() int { return b.rows * b.rowBytes() }

func (b *Buffer) rowBytes() int { return b.dt.RowBytes(b.cols) }

// Slice returns the view of rows [row0, row0+rows).
func (b *Buffer) Slice(row0, rows int) backend.Buffer {
	if row0 < 0 || rows < 0 || row0+rows > b.rows {
		panic(fmt.Sprintf("cuda: Slice(%d, %d) of a buffer of %d rows", row0, rows, b.rows))
	}
	v := *b
	v.rows = rows
	v.ptr = b.ptr + uint64(row0*b.rowBytes())
	return &v
}

// buffer returns b as a *Buffer of device d (or of the device whose capture d is the
// view of); it panics on a buffer of another device.
func (d *Device) buffer(b backend.Buffer, what string) *Buffer {
	cb, ok := b.(*Buffer)
	if !ok || cb.dev.device != d.device {
		panic(fmt.Sprintf("cuda: %s is not a buffer of %s", what, d.name))
	}
	d.noteUse(cb.alloc)
	return cb
}

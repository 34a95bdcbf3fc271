package cpu

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Buffer is a CPU tensor: rows × cols elements of one type in a byte slice, row r at
// byte r·DType().RowBytes(cols).
type Buffer struct {
	dev        *Device
	dt         tensor.DType
	rows, cols int
	data       []byte
	// fixed is set for a buffer over memory its user promised not to modify (Wrap, and
	// views of such a buffer), whose weights MatMul may therefore copy into the layout
	// of the level's kernel once (panels).
	fixed  bool
	panels []byte   // data in tensor.PackQ4_0Panels's layout, made by MatMul; nil until then
	mapped *mapping // the memory of panels where it is mapped (weightMem), or nil
}

// dropPanels releases the buffer's copy of its weights in another layout, if any: at
// Free, and after a write into the buffer (Upload, Copy, SetRows), so that the next
// MatMul packs what was written. The caller holds the device's lock (no kernel is
// reading them).
func (b *Buffer) dropPanels() {
	if b.panels == nil {
		return
	}
	b.panels = nil
	b.mapped.release()
	b.mapped = nil
}

var _ backend.Buffer = (*Buffer)(nil)

// DType is the element type.
func (b *Buffer) DType() tensor.DType { return b.dt }

// Rows is the number of rows.
func (b *Buffer) Rows() int { return b.rows }

// Cols is the number of elements per row.
func (b *Buffer) Cols() int { return b.cols }

// Device is the device the buffer lives on.
func (b *Buffer) Device() backend.Device { return b.dev }

// Bytes returns the buffer's memory.
func (b *Buffer) Bytes() []byte { return b.data }

// Slice returns rows [row0, row0+rows) as a view sharing memory with b.
func (b *Buffer) Slice(row0, rows int) backend.Buffer {
	if row0 < 0 || rows < 0 || row0+rows > b.rows {
		panic(fmt.Sprintf("cpu: Slice(%d, %d) of a buffer of %d rows", row0, rows, b.rows))
	}
	rb := b.rowBytes()
	return &Buffer{dev: b.dev, dt: b.dt, rows: rows, cols: b.cols, data: b.data[row0*rb : (row0+rows)*rb : (row0+rows)*rb], fixed: b.fixed}
}

func (b *Buffer) rowBytes() int { return b.dt.RowBytes(b.cols) }

// row returns the bytes of row r.
func (b *Buffer) row(r int) []byte {
	rb := b.rowBytes()
	return b.data[r*rb : (r+1)*rb]
}

// f32 views an F32 buffer as float32s.
func (b *Buffer) f32() []float32 { return tensor.Float32s(b.data)[:b.rows*b.cols] }

// i32 views an I32 buffer as int32s.
func (b *Buffer) i32() []int32 { return int32s(b.data)[:b.rows*b.cols] }

package model

import (
	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// remoteDevice stands in for a stage that another rank of a multi-process pipeline owns
// (rank.go): it has a name and free memory for the planner, and buffers with shapes but
// no memory, so the model and its sessions keep one entry per stage of the plan while
// this process loads and computes only its own. Its kernels do nothing; the rank's
// batch loop never runs a remote stage.
type remoteDevice struct {
	name string
	free int64
}

// remoteBuffer is a shape on a remote device.
type remoteBuffer struct {
	dt         tensor.DType
	rows, cols int
	dev        *remoteDevice
}

func (b *remoteBuffer) DType() tensor.DType    { return b.dt }
func (b *remoteBuffer) Rows() int              { return b.rows }
func (b *remoteBuffer) Cols() int              { return b.cols }
func (b *remoteBuffer) Device() backend.Device { return b.dev }
func (b *remoteBuffer) Slice(_, rows int) backend.Buffer {
	return &remoteBuffer{dt: b.dt, rows: rows, cols: b.cols, dev: b.dev}
}

func (d *remoteDevice) Name() string { return d.name }

// MemInfo reports the owning rank's free memory, for planning on rank 0.
func (d *remoteDevice) MemInfo() (free, total uint64, err error) {
	return uint64(d.free), uint64(d.free), nil
}

func (d *remoteDevice) Alloc(dt tensor.DType, rows, cols int) (backend.Buffer, error) {
	return &remoteBuffer{dt: dt, rows: rows, cols: cols, dev: d}, nil
}

// Wrap takes a weight without touching its bytes: the mapped file's pages of other
// ranks' stages are never read.
func (d *remoteDevice) Wrap(dt tensor.DType, rows, cols int, _ []byte) (backend.Buffer, error) {
	return d.Alloc(dt, rows, cols)
}

func (d *remoteDevice) Free(backend.Buffer)                                         {}
func (d *remoteDevice) Upload(backend.Buffer, []byte) error                         { return nil }
func (d *remoteDevice) Download([]byte, backend.Buffer) error                       { return nil }
func (d *remoteDevice) Sync() error                                                 { return nil }
func (d *remoteDevice) Close() error                                                { return nil }
func (d *remoteDevice) Embed(_, _, _ backend.Buffer)                                {}
func (d *remoteDevice) RMSNorm(_, _, _ backend.Buffer, _ float32)                   {}
func (d *remoteDevice) MatMul(_, _, _ backend.Buffer)                               {}
func (d *remoteDevice) RoPE(_, _ backend.Buffer, _ backend.Rope)                    {}
func (d *remoteDevice) SetRows(_, _, _ backend.Buffer)                              {}
func (d *remoteDevice) Attention(_, _, _, _, _ backend.Buffer, _ backend.Attention) {}
func (d *remoteDevice) SwiGLU(_, _, _ backend.Buffer)                               {}
func (d *remoteDevice) Add(_, _ backend.Buffer)                                     {}
func (d *remoteDevice) Copy(_, _ backend.Buffer)                                    {}

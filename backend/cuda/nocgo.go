//go:build !cgo

package cuda

// Without cgo the driver cannot be loaded: the package keeps its API so that everything
// that imports it builds (go install with CGO_ENABLED=0, cross-compiles), and Open,
// Count, Devices and NewPeers fail with errNoCgo. No Device, Peers, Graph or Event value
// can then exist, so their methods only report the same error (TestNoCgoAPI keeps this
// file's exported API the cgo build's).

import (
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// errNoCgo is what every entry point returns in a build without cgo.
var errNoCgo = fmt.Errorf("cuda: %w (built without cgo)", ErrNoDriver)

// driverErrorName has no driver to ask.
func driverErrorName(Result) string { return "" }

// Device is one CUDA GPU; without cgo none can be opened.
type Device struct{}

// Buffer is a tensor in device memory; without cgo none exists.
type Buffer struct{}

// Graph is a recorded sequence of kernels; without cgo none exists.
type Graph struct{}

// Event marks a point in a device's stream; without cgo none exists.
type Event struct{}

// Peers is the peer-access table of a set of devices; without cgo none exists.
type Peers struct{}

var (
	_ backend.Device          = (*Device)(nil)
	_ backend.Transferer      = (*Device)(nil)
	_ backend.SharedAllocator = (*Device)(nil)
	_ backend.Recorder        = (*Device)(nil)
	_ backend.Buffer          = (*Buffer)(nil)
)

// Open fails: there is no driver without cgo.
func Open(ordinal int) (*Device, error) { return nil, errNoCgo }

// OpenWith fails: there is no driver without cgo.
func OpenWith(ordinal int, o Options) (*Device, error) { return nil, errNoCgo }

// OpenPTXDir fails: there is no driver without cgo.
func OpenPTXDir(ordinal int, dir string) (*Device, error) { return nil, errNoCgo }

// Count fails: there is no driver without cgo.
func Count() (int, error) { return 0, errNoCgo }

// Devices fails: there is no driver without cgo.
func Devices() ([]Info, error) { return nil, errNoCgo }

// NewPeers fails: there is no driver without cgo.
func NewPeers(devs []*Device, pairs [][2]int, opts PeerOptions) (*Peers, error) {
	return nil, errNoCgo
}

// Name is "cuda (built without cgo)".
func (d *Device) Name() string { return "cuda (built without cgo)" }

// Ordinal is -1.
func (d *Device) Ordinal() int { return -1 }

// Info is empty.
func (d *Device) Info() Info { return Info{} }

// HasBLAS is false.
func (d *Device) HasBLAS() bool { return false }

// Granularity is 0.
func (d *Device) Granularity() int { return 0 }

// WeightCache is empty.
func (d *Device) WeightCache() WeightCacheStats { return WeightCacheStats{} }

// Close does nothing.
func (d *Device) Close() error { return nil }

// Sync fails.
func (d *Device) Sync() error { return errNoCgo }

// MemInfo fails.
func (d *Device) MemInfo() (free, total uint64, err error) { return 0, 0, errNoCgo }

// Alloc fails.
func (d *Device) Alloc(dt tensor.DType, rows, cols int) (backend.Buffer, error) {
	return nil, errNoCgo
}

// AllocMapped fails.
func (d *Device) AllocMapped(dt tensor.DType, rows, cols int) (*Buffer, error) {
	return nil, errNoCgo
}

// AllocShared fails.
func (d *Device) AllocShared(dt tensor.DType, rows, cols int, peer backend.Device) (backend.Buffer, error) {
	return nil, errNoCgo
}

// Grant fails.
func (d *Device) Grant(b *Buffer, peer *Device) error { return errNoCgo }

// Free does nothing.
func (d *Device) Free(buf backend.Buffer) {}

// Upload fails.
func (d *Device) Upload(dst backend.Buffer, src []byte) error { return errNoCgo }

// UploadFrom fails.
func (d *Device) UploadFrom(dst backend.Buffer, src *io.SectionReader) error { return errNoCgo }

// Download fails.
func (d *Device) Download(dst []byte, src backend.Buffer) error { return errNoCgo }

// TransferFrom fails.
func (d *Device) TransferFrom(dst, src backend.Buffer) (ok bool, err error) { return true, errNoCgo }

// Peer fails.
func (d *Device) Peer(peer *Device) (PeerInfo, error) { return PeerInfo{}, errNoCgo }

// NewEvent fails.
func (d *Device) NewEvent() (*Event, error) { return nil, errNoCgo }

// Wait fails.
func (d *Device) Wait(ev *Event) error { return errNoCgo }

// Capture fails.
func (d *Device) Capture(record func(k backend.Kernels) error) (*Graph, error) {
	return nil, errNoCgo
}

// Record fails.
func (d *Device) Record(key string, enqueue func(k backend.Kernels)) error { return errNoCgo }

// Embed does nothing.
func (d *Device) Embed(dst, table, tokens backend.Buffer) {}

// RMSNorm does nothing.
func (d *Device) RMSNorm(dst, x, weight backend.Buffer, eps float32) {}

// MatMul does nothing.
func (d *Device) MatMul(dst, w, x backend.Buffer) {}

// RoPE does nothing.
func (d *Device) RoPE(x, positions backend.Buffer, r backend.Rope) {}

// SetRows does nothing.
func (d *Device) SetRows(dst, src, rows backend.Buffer) {}

// Attention does nothing.
func (d *Device) Attention(dst, q, k, v, positions backend.Buffer, at backend.Attention) {}

// SwiGLU does nothing.
func (d *Device) SwiGLU(dst, gate, up backend.Buffer) {}

// Add does nothing.
func (d *Device) Add(dst, x backend.Buffer) {}

// Copy does nothing.
func (d *Device) Copy(dst, src backend.Buffer) {}

// DType is the zero type.
func (b *Buffer) DType() tensor.DType { return 0 }

// Rows is 0.
func (b *Buffer) Rows() int { return 0 }

// Cols is 0.
func (b *Buffer) Cols() int { return 0 }

// Bytes is 0.
func (b *Buffer) Bytes() int { return 0 }

// Ptr is 0.
func (b *Buffer) Ptr() uint64 { return 0 }

// Device is nil.
func (b *Buffer) Device() backend.Device { return nil }

// Slice returns b.
func (b *Buffer) Slice(row0, rows int) backend.Buffer { return b }

// Launch fails.
func (g *Graph) Launch() error { return errNoCgo }

// Close does nothing.
func (g *Graph) Close() error { return nil }

// Record fails.
func (ev *Event) Record() error { return errNoCgo }

// Synchronize fails.
func (ev *Event) Synchronize() error { return errNoCgo }

// Since fails.
func (ev *Event) Since(start *Event) (time.Duration, error) { return 0, errNoCgo }

// Close does nothing.
func (ev *Event) Close() error { return nil }

// Pairs is empty.
func (p *Peers) Pairs() []Pair { return nil }

// State is PeerUnknown.
func (p *Peers) State(from, to int) PeerState { return PeerUnknown }

// Measure fails.
func (p *Peers) Measure(from, to, size, reps int) (Timing, error) { return Timing{}, errNoCgo }

// Close does nothing.
func (p *Peers) Close() error { return nil }

// WithStream fails: there is no stream without the driver.
func (d *Device) WithStream(fn func(stream unsafe.Pointer) error) error { return errNoCgo }

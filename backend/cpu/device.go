// Package cpu is the reference device: every kernel of backend.Kernels in Go (with
// amd64 assembly that gives the same bits), parallel over a fixed pool of goroutines,
// computing what llama.cpp's CPU backend computes, in the same float32 order where
// that order decides the bits.
//
// The order followed is that of the x86-64 AVX-512 build that made the project's
// reference numbers: activations quantized to the weight's vec-dot type before a
// matmul (the x86 quantizer for Q8_0/Q8_1), llamafile's tinyBLAS for F32/F16 batches
// and ggml_vec_dot otherwise (simd.go, and the tensor package's x86-order dots), RMS
// sums in float64, ggml_v_expf and ggml_v_silu lane by lane, glibc's expf/sinf/cosf
// (libm.go), and llama.cpp's three attention kernels (attention.go, flashattn.go).
// With them the logits of stories260K and synth-256 in Q8_0 match llama.cpp's bit
// for bit.
//
// Kernels run synchronously on the calling goroutine and the pool, so submission order
// is execution order. A Device may be shared by goroutines: kernels take a lock.
package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Device is the CPU backend. Its buffers are Go byte slices.
type Device struct {
	mu      sync.Mutex
	threads int
	pool    *pool
	err     error // first failure; reported by Sync
	closed  bool

	// Per-kernel task state, reused so that a kernel call does not allocate.
	mm   matmulTask
	att  attentionTask
	rope ropeTask
	rms  rmsTask
	ew   rowsTask
	mms  multiMatMulTask
	// mmScratch[i] holds the converted activations of MatMul (i = 0) and of
	// MultiMatMul's product i.
	mmScratch [maxProducts]mmScratch
}

var _ backend.Device = (*Device)(nil)

// New returns a CPU device running kernels on threads goroutines (runtime.NumCPU()
// when threads ≤ 0). Close stops them.
func New(threads int) *Device {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	d := &Device{threads: threads, pool: newPool(threads)}
	d.att.scratch = make([]attentionScratch, threads)
	return d
}

// Name returns "cpu (N threads)".
func (d *Device) Name() string { return fmt.Sprintf("cpu (%d threads)", d.threads) }

// Threads is the number of goroutines kernels run on.
func (d *Device) Threads() int { return d.threads }

// Alloc returns a zeroed buffer of rows × cols elements of dt.
func (d *Device) Alloc(dt tensor.DType, rows, cols int) (backend.Buffer, error) {
	if !dt.Known() {
		return nil, fmt.Errorf("cpu: alloc: unknown type %v", dt)
	}
	if rows < 0 || cols < 0 || cols%dt.BlockSize() != 0 {
		return nil, fmt.Errorf("cpu: alloc %v (%d, %d): bad shape", dt, rows, cols)
	}
	return &Buffer{dev: d, dt: dt, rows: rows, cols: cols, data: make([]byte, rows*dt.RowBytes(cols))}, nil
}

// Wrap returns a buffer of rows × cols elements of dt over data without copying, for
// weights that already sit in memory (a mapped GGUF file). data must hold exactly
// rows·RowBytes(cols) bytes and must not be modified while the buffer is in use.
// Where the level's kernel reads Q4_0 weights in another layout, MatMul copies the
// matrix into it at its first use (q40Panels): the copy takes as much memory again.
func (d *Device) Wrap(dt tensor.DType, rows, cols int, data []byte) (backend.Buffer, error) {
	if !dt.Known() || cols%dt.BlockSize() != 0 {
		return nil, fmt.Errorf("cpu: wrap %v (%d, %d): bad type or shape", dt, rows, cols)
	}
	if len(data) != rows*dt.RowBytes(cols) {
		return nil, fmt.Errorf("cpu: wrap %v (%d, %d): have %d bytes, want %d", dt, rows, cols, len(data), rows*dt.RowBytes(cols))
	}
	return &Buffer{dev: d, dt: dt, rows: rows, cols: cols, data: data, fixed: true}, nil
}

// Free drops the buffer's memory; the garbage collector reclaims it.
func (d *Device) Free(b backend.Buffer) {
	if cb, ok := b.(*Buffer); ok {
		cb.data = nil
		d.mu.Lock()
		cb.dropPanels()
		d.mu.Unlock()
	}
}

// Upload copies src into dst.
func (d *Device) Upload(dst backend.Buffer, src []byte) error {
	b, err := d.own(dst)
	if err != nil {
		return fmt.Errorf("cpu: upload: %w", err)
	}
	if len(src) != len(b.data) {
		return fmt.Errorf("cpu: upload: %d bytes into a buffer of %d", len(src), len(b.data))
	}
	copy(b.data, src)
	if b.panels != nil { // a wrapped buffer written all the same: repack at next use
		d.mu.Lock()
		b.dropPanels()
		d.mu.Unlock()
	}
	return nil
}

// Download copies src's bytes into dst.
func (d *Device) Download(dst []byte, src backend.Buffer) error {
	b, err := d.own(src)
	if err != nil {
		return fmt.Errorf("cpu: download: %w", err)
	}
	if len(dst) != len(b.data) {
		return fmt.Errorf("cpu: download: buffer of %d bytes into %d", len(b.data), len(dst))
	}
	copy(dst, b.data)
	return nil
}

// Sync returns the first failure since the device opened; kernels are synchronous.
func (d *Device) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Close stops the worker goroutines. Buffers stay readable until collected.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		d.pool.close()
	}
	return d.err
}

// fail records err as the device's failure unless one is already recorded. The caller
// holds d.mu.
func (d *Device) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// errForeign is own's error for a buffer that is not one of this device's.
var errForeign = errors.New("buffer belongs to another device")

// own returns b as one of this device's buffers, or errForeign.
func (d *Device) own(b backend.Buffer) (*Buffer, error) {
	cb, ok := b.(*Buffer)
	if !ok || cb.dev != d {
		return nil, errForeign
	}
	return cb, nil
}

// lock takes the kernel lock; it reports false (and records an error) after Close.
func (d *Device) lock(op string) bool {
	d.mu.Lock()
	if d.closed {
		d.fail(fmt.Errorf("cpu: %s after Close", op))
		d.mu.Unlock()
		return false
	}
	return true
}

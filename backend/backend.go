// Package backend defines what a device must provide to run a LLaMA forward pass, and
// nothing else: the model (package model) is written against these interfaces, and the
// CPU (backend/cpu) and CUDA (backend/cuda) devices implement them.
//
// Every operation carries a batch: a Buffer is a 2-D tensor whose rows are tokens, and
// single-token decode is the batch of one. Positions travel in a device-resident I32
// Buffer rather than as host integers, so a recorded sequence of kernels (a CUDA graph)
// can be replayed for every step unchanged.
//
// Error model: kernel methods enqueue work and return nothing; a Device keeps its first
// failure and reports it from Sync (and from every later Sync), the way bufio.Scanner
// reports through Err. Methods panic only on programmer error (mismatched shapes), with
// a "backend:" or device-specific prefix.
package backend

import (
	"io"

	"github.com/infergo/infer/tensor"
)

// A Buffer is a 2-D tensor of Rows() rows of Cols() elements of DType(), resident on one
// Device. Row r starts at byte r*DType().RowBytes(Cols()).
type Buffer interface {
	DType() tensor.DType
	Rows() int
	Cols() int
	Device() Device
	// Slice returns a view of rows [row0, row0+rows) that shares memory with the buffer.
	Slice(row0, rows int) Buffer
}

// A Device owns memory and runs Kernels in submission order.
type Device interface {
	Kernels
	// Name is a short human-readable name ("cpu", "cuda:0 NVIDIA H200").
	Name() string
	// Alloc returns a zeroed buffer of rows × cols elements of dt.
	Alloc(dt tensor.DType, rows, cols int) (Buffer, error)
	// Free releases a buffer returned by Alloc; views need no Free.
	Free(b Buffer)
	// Upload copies src, the raw bytes of all of dst's rows, into dst. It may return
	// before the copy is done; src may be reused once Upload returns.
	Upload(dst Buffer, src []byte) error
	// Download waits for queued work and copies src's raw bytes into dst.
	Download(dst []byte, src Buffer) error
	// Sync waits for queued work and returns the first failure since the device opened.
	Sync() error
	// Close waits for queued work and releases every buffer the device allocated.
	Close() error
}

// Kernels are the operations of a llama block. The destination comes first; shapes are
// (rows, cols) and every float activation is F32 unless stated.
type Kernels interface {
	// Embed sets row i of dst (n, dim) to row tokens[i] of table (vocab, dim),
	// dequantized. tokens is an I32 buffer of n rows and one column.
	Embed(dst, table, tokens Buffer)
	// RMSNorm sets each row of dst to x/rms(x) ⊙ weight; weight is one row of F32.
	// weight may also be shorter than the rows, of a length that divides theirs: each
	// group of that many elements of a row is then normalised on its own, with the same
	// weight (a per-head norm of q or k). dst may be x.
	RMSNorm(dst, x, weight Buffer, eps float32)
	// MatMul sets dst (n, out) = x (n, in) · wᵀ where w is (out, in) of any weight type.
	// Quantized weights are multiplied against activations quantized to
	// w.DType().VecDotType(), as llama.cpp's CPU path does.
	MatMul(dst, w, x Buffer)
	// RoPE rotates x (n, heads·headDim) in place; row i is at position positions[i]
	// (an I32 buffer of n rows).
	RoPE(x, positions Buffer, r Rope)
	// SetRows stores row i of src (n, cols) into row rows[i] of dst, converting to
	// dst's type (F32 or F16: the KV cache). rows is an I32 buffer of n rows.
	SetRows(dst, src, rows Buffer)
	// Attention sets dst (n, heads·headDim) to causal softmax attention of q (n,
	// heads·headDim) over the cache rows k, v (ctx, kvHeads·headDim). Row i attends to
	// cache rows 0..positions[i] inclusive; the cache must already hold them.
	Attention(dst, q, k, v, positions Buffer, a Attention)
	// SwiGLU sets dst = silu(gate) ⊙ up, element-wise.
	SwiGLU(dst, gate, up Buffer)
	// Add sets dst += x, element-wise. x is dst's shape, or one row that is added to
	// every row of dst (a bias).
	Add(dst, x Buffer)
	// Copy copies src into dst of the same shape, converting between F32 and F16.
	Copy(dst, src Buffer)
}

// A Product is one matrix product of MultiMatMuler.MultiMatMul: Dst = x · Wᵀ.
type Product struct {
	Dst, W Buffer
}

// MultiMatMuler is an optional Kernels upgrade for the projections of one input (q, k
// and v; gate and up): MultiMatMul(x, p) computes what MatMul(p[i].Dst, p[i].W, x) for
// each i in turn computes, bit for bit, but may run the products together (on the CPU:
// x converted once, and one parallel section over the rows of all the matrices instead
// of one each). No Dst may be x or another product's Dst.
type MultiMatMuler interface {
	MultiMatMul(x Buffer, p []Product)
}

// Rope describes the rotary position embedding of one projection.
type Rope struct {
	HeadDim int     // elements per head
	Dims    int     // rotated elements per head (n_rot, at most HeadDim)
	Base    float32 // rope.freq_base
	Scale   float32 // frequency scale: 1 / rope.scaling.factor for linear scaling, else 1
	// NeoX selects the rotation of element pairs (i, i+Dims/2) instead of adjacent
	// pairs (2i, 2i+1). GGUF llama weights use adjacent pairs (NeoX false).
	NeoX bool
	// Factors, if not nil, is one F32 row of Dims/2 frequency divisors (rope_freqs.weight,
	// llama 3.1 scaling).
	Factors Buffer
}

// Attention describes multi-head attention with grouped K/V heads.
type Attention struct {
	Heads   int     // query heads
	KVHeads int     // key/value heads; Heads is a multiple of it
	HeadDim int     // elements per head
	Scale   float32 // applied to q·k, usually 1/sqrt(HeadDim)
}

// Transferer is an optional Device upgrade: a device that can copy a buffer from
// another device without going through the host implements it, and split uses it the
// way io.Copy uses io.WriterTo.
type Transferer interface {
	// TransferFrom enqueues dst = src where src lives on another device; ok is false
	// when the device has no direct path from src's device.
	TransferFrom(dst, src Buffer) (ok bool, err error)
}

// ReaderUploader is an optional Device upgrade for loading weights: UploadFrom copies
// src's bytes (all of dst's rows, src.Size() of them) into dst reading them with
// src.ReadAt, so that a model file's tensors reach the device without the file's memory
// mapping being faulted in page by page. Like Upload, it may return before the copy is
// done.
type ReaderUploader interface {
	UploadFrom(dst Buffer, src *io.SectionReader) error
}

// SharedAllocator is an optional Device upgrade for the hidden-state buffers at stage
// boundaries: AllocShared returns a zeroed buffer like Alloc that peer, the neighbouring
// stage's device, may also read and write directly where the two devices have a direct
// path (on CUDA: a VMM allocation mapped for exactly the owner and peer). Without such a
// path it is a plain buffer, and Transfer still works.
type SharedAllocator interface {
	AllocShared(dt tensor.DType, rows, cols int, peer Device) (Buffer, error)
}

// Recorder is an optional Device upgrade for replaying a fixed sequence of kernels
// cheaply (on CUDA: a graph captured once and launched per step). Record calls enqueue
// the first time a key is seen, with the Kernels to issue the sequence through, and
// records what it enqueued; later calls with the same key replay the recording without
// calling enqueue. enqueue must only call k's methods (not the Device's: a recording
// device keeps every other caller out until the recording ends, the calling goroutine
// included), on buffers of the device that stay allocated. Values that change between
// steps (tokens, positions) must therefore live in device buffers that are uploaded
// before Record. A device without the upgrade is used by calling enqueue with the
// device itself.
type Recorder interface {
	Record(key string, enqueue func(k Kernels)) error
}

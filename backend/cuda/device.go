package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/infergo/infer/backend"
)

// Device is one CUDA GPU: its primary context, one compute stream on which every kernel
// and copy runs in submission order, the kernels loaded from the embedded PTX, pinned
// staging memory for uploads and downloads, and the buffers it allocated.
//
// A Device is safe for use by several goroutines. Their calls are serialised by one lock
// per physical GPU, which every Device opened on that GPU (virtual devices) shares, and
// each call's work is queued in the order the calls took the lock. Capture and Record
// hold the lock from the start of a capture to its end, so that no other goroutine's
// work is captured or breaks the capture: the kernels to record are issued through the
// backend.Kernels that Capture hands to its callback, and every other call waits.
type Device struct {
	*device // the state, shared with the views Capture hands out
	// view is set on the Kernels value a capture hands to its callback: its calls run
	// under the lock the capture already holds.
	view *captureView
}

// device is a Device's state.
type device struct {
	ordinal int
	dev     C.CUdevice
	ctx     C.CUcontext
	name    string
	info    Info

	mu      *gpuLock // guards everything below and the context-bound driver calls
	stream  C.CUstream
	funcs   map[string]C.CUfunction // kernel entry name -> function
	modules []C.CUmodule
	args    *argBuffer // C memory for kernel parameters
	staging *staging   // pinned host slots for Upload and Download
	vmm     vmm        // allocation granularity for mapped buffers
	blas    *blas      // nil when cuBLAS is unavailable
	allocs  map[*allocation]struct{}
	// attnPart holds split-attention partial results (grown on demand, see scratch).
	attnPart *allocation
	q8Buf    *allocation // activations quantized for the mat-vec kernels
	q8       q8Key       // what q8Buf holds (matmul.go)
	// writes counts the calls that may have written device memory in ways the q8 cache
	// does not track; it is bumped in one place, lock (see q8Key).
	writes    uint64
	capturing bool // a graph is being recorded (Capture)
	// graphs are the graphs Record keeps, by key; uses, while Record captures, collects
	// the allocations the captured kernels use.
	graphs    map[string]*recorded
	uses      map[*allocation]struct{}
	held      *heldMV   // a batch-1 mat-vec not launched yet, for fusion (fuse.go)
	pair      *heldPair // a RoPE or SetRows waiting for its twin (pair.go)
	noFuse    bool      // tests: launch every kernel as asked, unfused
	noFlash   bool      // tests: prompt attention on the per-row path, not the flash kernels
	aheadRows int       // batches of this many rows or more dequantize on the side stream (aheadMinRows; tests change it)
	peers     *Peers    // the peer table the device belongs to (NewPeers), or nil
	err       error     // first failure, reported by Sync
	closed    bool
	// mmqOn (Options.MMQ) sends quantized prompt batches through the MMQ kernels (mmq.go);
	// mmqTileSet, for tests, fixes their token tile (0: mmqTile chooses).
	mmqOn      bool
	mmqTileSet int
	// wgOn says the wgmma module loads and gemm uses it (a GPU that can run it,
	// wgCapable, unless Options.NoWGMMA); wgStages, for tests, picks the kernels' pipeline
	// depth (0: wgStagesDefault); tma holds their launches' tensor maps.
	wgOn     bool
	wgStages int
	tma      tmaMaps
	// wcache keeps widened weights for gemm (OpenWith's Options.WeightCacheBytes); nil
	// when off.
	wcache *weightCache
	// ahead dequantizes prefill weights on a side stream (dequant_ahead.go); nil until
	// the first batched MatMul of a quantized weight. uploaded says an Upload was queued
	// since the last dequantization ahead, which must then wait for it (markWritten).
	ahead    *ahead
	uploaded bool
	// attnCount holds the split-attention counters, one per query row and head (zeroed
	// once, see zeroScratch); attnSplit, when keys > 0, replaces the split policy of
	// decode attention in tests and benchmarks (splitKeys and warpMinKeys, attention.go),
	// and group, when > 0, caps the query heads a block serves (gqaMax).
	attnCount *allocation
	attnSplit struct{ keys, warpKeys, group int }
}

// gpuLock is the lock of one physical GPU, shared by every Device opened on it.
type gpuLock struct{ sync.Mutex }

// gpuLocks holds one lock per GPU ordinal for the life of the process, like the primary
// contexts they guard: a capture on one Device must also keep out the work of another
// Device on the same GPU (virtual devices), which shares its context.
var gpuLocks struct {
	sync.Mutex
	byOrdinal map[int]*gpuLock
}

// lockOf returns the lock of GPU ordinal.
func lockOf(ordinal int) *gpuLock {
	gpuLocks.Lock()
	defer gpuLocks.Unlock()
	if gpuLocks.byOrdinal == nil {
		gpuLocks.byOrdinal = map[int]*gpuLock{}
	}
	l := gpuLocks.byOrdinal[ordinal]
	if l == nil {
		l = &gpuLock{}
		gpuLocks.byOrdinal[ordinal] = l
	}
	return l
}

var _ backend.Device = (*Device)(nil)

// errClosed is the error of a call on a closed Device.
var errClosed = errors.New("device closed")

// Open retains the primary context of GPU ordinal, creates its stream and loads the
// kernels. It fails with an error wrapping ErrNoDriver when libcuda.so.1 is absent.
func Open(ordinal int) (*Device, error) {
	return open(ordinal, embeddedPTX, Options{})
}

// OpenWith is Open with options; OpenWith(ordinal, Options{}) is Open(ordinal).
func OpenWith(ordinal int, o Options) (*Device, error) {
	return openWith(ordinal, embeddedPTX, o)
}

// openWith is OpenWith with the PTX source given.
func openWith(ordinal int, ptx ptxSource, o Options) (*Device, error) {
	if o.WeightCacheBytes < 0 {
		return nil, fmt.Errorf("cuda: open device %d: weight cache of %d bytes", ordinal, o.WeightCacheBytes)
	}
	if o.KernelDir != "" {
		ptx = dirPTX(o.KernelDir)
	}
	d, err := open(ordinal, ptx, o)
	if err != nil {
		return nil, err
	}
	if o.WeightCacheBytes > 0 {
		d.mu.Lock()
		d.wcache = newWeightCache(o.WeightCacheBytes)
		d.mu.Unlock()
	}
	return d, nil
}

// open is Open with the PTX source given (tests may load freshly compiled PTX) and the
// options that setUp needs (o.MMQ).
func open(ordinal int, ptx ptxSource, o Options) (*Device, error) {
	go cublasLoad() // dlopen's relocations of libcublas(Lt) overlap cuInit and the context's creation
	if err := load(); err != nil {
		return nil, err
	}
	dev, ctx, err := retainPrimary(ordinal)
	if err != nil {
		return nil, fmt.Errorf("cuda: open device %d: %w", ordinal, err)
	}
	info, err := deviceInfo(ordinal)
	if err != nil {
		return nil, errors.Join(err, check("cuDevicePrimaryCtxRelease_v2", C.cu_primary_ctx_release(dev)))
	}
	d := &Device{device: &device{ordinal: ordinal, dev: dev, ctx: ctx, info: info, allocs: map[*allocation]struct{}{}, mu: lockOf(ordinal), writes: 1}}
	d.name = fmt.Sprintf("cuda:%d %s", ordinal, info.Name)
	d.mmqOn = o.MMQ
	d.wgOn = d.wgCapable(!o.NoWGMMA && os.Getenv("INFER_CUDA_WGMMA") != "0")
	d.aheadRows = aheadMinRows
	if err := d.do(func() error { return d.setUp(ptx) }); err != nil {
		return nil, fmt.Errorf("cuda: open device %d: %w", ordinal, errors.Join(err, d.Close()))
	}
	return d, nil
}

// retainPrimary retains the primary context of GPU ordinal. open retains it before
// deviceInfo, whose free-memory query retains and releases the context too: were that
// the only hold, its release would destroy the context and open's retain would create
// it again, two context creations and a destruction (~0.2 s on an H200) for one.
func retainPrimary(ordinal int) (C.CUdevice, C.CUcontext, error) {
	var dev C.CUdevice
	var ctx C.CUcontext
	if err := check("cuDeviceGet", C.cu_device_get(&dev, C.int(ordinal))); err != nil {
		return dev, nil, err
	}
	if err := check("cuDevicePrimaryCtxRetain", C.cu_primary_ctx_retain(&ctx, dev)); err != nil {
		return dev, nil, err
	}
	return dev, ctx, nil
}

// setUp creates the per-device state; it runs with the context current.
func (d *Device) setUp(ptx ptxSource) error {
	// The compute stream runs at the greatest priority: the dequantizations of the
	// prefill side stream (dequant_ahead.go, the least) then fill the SMs its GEMMs
	// leave free instead of holding back the GEMM they run beside.
	if err := check("cuStreamCreateWithPriority", C.cu_stream_create_with_priority(&d.stream, 1 /* CU_STREAM_NON_BLOCKING */, priorityFirst)); err != nil {
		return err
	}
	var err error
	if d.args, err = newArgBuffer(); err != nil {
		return err
	}
	if d.staging, err = newStaging(stagingSlots, stagingSlotBytes); err != nil {
		return err
	}
	if err := d.loadKernels(ptx); err != nil {
		return err
	}
	if d.vmm, err = newVMM(d); err != nil {
		return err
	}
	d.blas = newBLAS(d.stream) // optional: nil without libcublas
	return nil
}

// Name is "cuda:<ordinal> <device name>".
func (d *Device) Name() string { return d.name }

// Ordinal is the device's CUDA ordinal.
func (d *Device) Ordinal() int { return d.ordinal }

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// HasBLAS reports whether cuBLAS was loaded, so that MatMul of more than a few rows uses
// tensor-core GEMM rather than the mat-vec kernels.
func (d *Device) HasBLAS() bool { return d.blas != nil }

// callMode says how lock runs a call.
type callMode uint8

const (
	// kernelCall marks the backend.Kernels methods: the only calls a capture's view
	// accepts, since they only enqueue work on the stream.
	kernelCall callMode = 1 << iota
	// holdCall keeps a mat-vec or kernel pair held back for fusion (fuse.go, pair.go)
	// held, for fn to extend or launch; without it, held work is launched first, so
	// that fn sees every earlier kernel enqueued.
	holdCall
	// exactCall promises that fn reports every device write it enqueues through wrote,
	// so that the quantized activations (q8Key) stay valid across it. Every other call
	// counts as one that may have written anything.
	exactCall
)

// do runs fn with the device's context current on a locked OS thread, serialised with
// every other call on the GPU, after launching any held kernels. It is the path of every
// call that is not a kernel method; a capture's view refuses it.
func (d *Device) do(fn func() error) error { return d.lock(0, fn) }

// lock runs fn under the GPU's lock with the context current, as mode says. It is the
// one place every call passes through: it refuses calls on a closed device and, unless
// the call is exact, counts a write that invalidates the quantized activations.
func (d *Device) lock(mode callMode, fn func() error) error {
	if v := d.view; v != nil { // the capture holds the lock, on this goroutine's behalf
		if !v.active.Load() {
			panic("cuda: the Kernels of a capture used after the capture ended")
		}
		if mode&kernelCall == 0 {
			return errors.New("only kernel methods may run while a graph is captured")
		}
		return d.locked(mode, fn)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxSetCurrent", C.cu_ctx_set_current(d.ctx)); err != nil {
		return err
	}
	return d.locked(mode, fn)
}

// locked is lock's body, under the lock with the context current.
func (d *Device) locked(mode callMode, fn func() error) error {
	if mode&holdCall == 0 && (d.held != nil || d.pair != nil) {
		if err := d.flush(); err != nil {
			d.fail(fmt.Errorf("cuda: held kernels on %s: %w", d.name, err))
		}
	}
	if mode&exactCall == 0 {
		d.writes++
	}
	return fn()
}

// fail records err as the device's first failure, if it is the first; it runs under the
// lock.
func (d *Device) fail(err error) {
	if err != nil && d.err == nil {
		d.err = err
	}
}

// enqueue runs fn like do as a kernel call and keeps its error for Sync: the kernel
// methods' error path.
func (d *Device) enqueue(op string, fn func() error) { d.enqueueAs(op, kernelCall, fn) }

// enqueueAs is enqueue with the call mode given.
func (d *Device) enqueueAs(op string, mode callMode, fn func() error) {
	failed := false
	err := d.lock(mode, func() error {
		if err := fn(); err != nil {
			failed = true
			d.fail(fmt.Errorf("cuda: %s on %s: %w", op, d.name, err))
		}
		return nil
	})
	if err != nil && !failed { // lock refused the call: record why, under the lock
		err = fmt.Errorf("cuda: %s on %s: %w", op, d.name, err)
		if d.view != nil {
			d.fail(err)
			return
		}
		d.mu.Lock()
		d.fail(err)
		d.mu.Unlock()
	}
}

// Sync waits for queued work and returns the first failure since the device opened.
func (d *Device) Sync() error {
	err := d.do(func() error {
		d.fail(check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)))
		return d.err
	})
	return err
}

// Close waits for queued work, then releases every buffer, recorded graph, the kernels,
// the stream and the device's hold on the primary context. It returns the first failure,
// if any. Close is idempotent: a second Close returns nil and releases nothing, so the
// context another Device on the same GPU retains stays retained. Close the peer table
// the device belongs to (Peers.Close) first; every later call on the device fails.
func (d *Device) Close() error {
	if d.view != nil {
		return errors.New("cuda: Close on the Kernels of a capture")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var errs []error
	if d.ctx != nil {
		if err := check("cuCtxSetCurrent", C.cu_ctx_set_current(d.ctx)); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, d.release())
		}
		errs = append(errs, check("cuDevicePrimaryCtxRelease_v2", C.cu_primary_ctx_release(d.dev)))
		d.ctx = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuda: close %s: %w", d.name, err)
	}
	return nil
}

// release frees what setUp and later calls created; it runs under the lock with the
// context current.
func (d *Device) release() error {
	var errs []error
	if d.stream != nil {
		errs = append(errs, check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)))
	}
	d.held, d.pair = nil, nil
	errs = append(errs, d.dropGraphs(nil), d.wcache.close(), d.ahead.close())
	d.ahead = nil
	for a := range d.allocs {
		errs = append(errs, a.release())
	}
	d.allocs = nil
	errs = append(errs, d.blas.close(), d.staging.close(), d.args.close(), d.tma.close(), d.unloadKernels())
	if d.stream != nil {
		errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(d.stream)))
		d.stream = nil
	}
	return errors.Join(errs...)
}

// OpenPTXDir is Open with the kernels' PTX read from dir (one <module>.ptx a .cu file)
// instead of the embedded copy: for trying freshly compiled kernels on a GPU machine
// before they are committed.
func OpenPTXDir(ordinal int, dir string) (*Device, error) {
	return open(ordinal, dirPTX(dir), Options{})
}

package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/infergo/infer/backend"
)

// Device is one CUDA GPU: its primary context, one compute stream on which every kernel
// and copy runs in submission order, the kernels loaded from the embedded PTX, pinned
// staging memory for uploads and downloads, and the buffers it allocated.
//
// A Device is safe for use by several goroutines; their calls are serialised.
type Device struct {
	ordinal int
	dev     C.CUdevice
	ctx     C.CUcontext
	name    string
	info    Info

	mu      sync.Mutex // guards everything below and the context-bound driver calls
	stream  C.CUstream
	funcs   map[string]C.CUfunction // kernel entry name -> function
	modules []C.CUmodule
	args    *argBuffer // C memory for kernel parameters
	staging *staging   // pinned host slots for Upload and Download
	vmm     vmm        // allocation granularity for mapped buffers
	blas    *blas      // nil when cuBLAS is unavailable
	allocs  map[*allocation]struct{}
	// attnPart holds split-attention partial results (grown on demand, see scratch).
	attnPart  *allocation
	q8Buf     *allocation // activations quantized for the mat-vec kernels
	q8        q8Cache     // what q8Buf holds
	capturing bool        // a graph is being recorded (Capture)
	// graphs are the graphs Record keeps, by key; uses, while Record captures, collects
	// the allocations the captured kernels use.
	graphs  map[string]*recorded
	uses    map[*allocation]struct{}
	held    *heldMV   // a batch-1 mat-vec not launched yet, for fusion (fuse.go)
	pair    *heldPair // a RoPE or SetRows waiting for its twin (pair.go)
	noFuse  bool      // tests: launch every kernel as asked, unfused
	noFlash bool      // tests: prompt attention on the per-row path, not the flash kernels
	noAhead bool      // tests: prefill weights dequantized on the compute stream
	peers   *Peers    // the peer table the device belongs to (NewPeers), or nil
	err     error     // first failure, reported by Sync
	closed  bool
	// wcache keeps widened weights for gemm (OpenWith's Options.WeightCacheBytes); nil
	// when off.
	wcache *weightCache
	// ahead dequantizes prefill weights on a side stream (dequant_ahead.go); nil until
	// the first batched MatMul of a quantized weight.
	ahead *ahead
}

var _ backend.Device = (*Device)(nil)

// Open retains the primary context of GPU ordinal, creates its stream and loads the
// kernels. It fails with an error wrapping ErrNoDriver when libcuda.so.1 is absent.
func Open(ordinal int) (*Device, error) {
	return open(ordinal, embeddedPTX)
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
	d, err := open(ordinal, ptx)
	if err != nil {
		return nil, err
	}
	if o.WeightCacheBytes > 0 {
		d.do(func() error { d.wcache = newWeightCache(o.WeightCacheBytes); return nil })
	}
	return d, nil
}

// open is Open with the PTX source given (tests may load freshly compiled PTX).
func open(ordinal int, ptx ptxSource) (*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	info, err := deviceInfo(ordinal)
	if err != nil {
		return nil, err
	}
	d := &Device{ordinal: ordinal, info: info, allocs: map[*allocation]struct{}{}}
	d.name = fmt.Sprintf("cuda:%d %s", ordinal, info.Name)
	if err := check("cuDeviceGet", C.cu_device_get(&d.dev, C.int(ordinal))); err != nil {
		return nil, fmt.Errorf("cuda: open device %d: %w", ordinal, err)
	}
	if err := check("cuDevicePrimaryCtxRetain", C.cu_primary_ctx_retain(&d.ctx, d.dev)); err != nil {
		return nil, fmt.Errorf("cuda: open device %d: %w", ordinal, err)
	}
	if err := d.do(func() error { return d.setUp(ptx) }); err != nil {
		d.Close()
		return nil, fmt.Errorf("cuda: open device %d: %w", ordinal, err)
	}
	return d, nil
}

// setUp creates the per-device state; it runs with the context current.
func (d *Device) setUp(ptx ptxSource) error {
	if err := check("cuStreamCreate", C.cu_stream_create(&d.stream, 1 /* CU_STREAM_NON_BLOCKING */)); err != nil {
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

// do runs fn with the device's context current on a locked OS thread, serialised with
// every other call on the device. A mat-vec held back for fusion (see fuse.go) is
// launched first, so that fn sees every earlier kernel enqueued.
func (d *Device) do(fn func() error) error { return d.doFused(false, fn) }

// doFused is do; with hold, a mat-vec held back for fusion stays held, for fn to extend
// or launch.
func (d *Device) doFused(hold bool, fn func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxSetCurrent", C.cu_ctx_set_current(d.ctx)); err != nil {
		return err
	}
	if !hold && (d.held != nil || d.pair != nil) {
		if err := d.flush(); err != nil {
			d.fail(fmt.Errorf("cuda: held kernels on %s: %w", d.name, err))
		}
	}
	return fn()
}

// fail records err as the device's first failure, if it is the first; it runs under mu.
func (d *Device) fail(err error) {
	if err != nil && d.err == nil {
		d.err = err
	}
}

// enqueue runs fn like do and keeps its error for Sync: the kernel methods' error path.
func (d *Device) enqueue(op string, fn func() error) { d.enqueueFused(op, false, fn) }

// enqueueFused is enqueue through doFused.
func (d *Device) enqueueFused(op string, hold bool, fn func() error) {
	err := d.doFused(hold, func() error {
		if d.closed {
			return errors.New("device closed")
		}
		if err := fn(); err != nil {
			d.fail(fmt.Errorf("cuda: %s on %s: %w", op, d.name, err))
		}
		return nil
	})
	if err != nil {
		d.mu.Lock()
		d.fail(fmt.Errorf("cuda: %s on %s: %w", op, d.name, err))
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

// Close waits for queued work, then releases every buffer, the kernels, the stream and
// the primary context. It returns the first failure, if any.
func (d *Device) Close() error {
	var errs []error
	err := d.do(func() error {
		if d.closed {
			return nil
		}
		d.closed = true
		if d.stream != nil {
			errs = append(errs, check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)))
		}
		errs = append(errs, d.dropGraphs(nil), d.wcache.close(), d.ahead.close())
		d.ahead = nil
		for a := range d.allocs {
			errs = append(errs, a.release())
		}
		d.allocs = nil
		errs = append(errs, d.blas.close(), d.staging.close(), d.args.close(), d.unloadKernels())
		if d.stream != nil {
			errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(d.stream)))
		}
		return nil
	})
	errs = append(errs, err, check("cuDevicePrimaryCtxRelease_v2", C.cu_primary_ctx_release(d.dev)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuda: close %s: %w", d.name, err)
	}
	return nil
}

// OpenPTXDir is Open with the kernels' PTX read from dir (one <module>.ptx a .cu file)
// instead of the embedded copy: for trying freshly compiled kernels on a GPU machine
// before they are committed.
func OpenPTXDir(ordinal int, dir string) (*Device, error) {
	return open(ordinal, dirPTX(dir))
}

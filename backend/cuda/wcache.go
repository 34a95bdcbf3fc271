package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/tensor"
)

// WeightCache reports the device's weight cache.
func (d *Device) WeightCache() WeightCacheStats {
	var s WeightCacheStats
	d.do(func() error {
		if c := d.wcache; c != nil {
			s = WeightCacheStats{Limit: c.limit, Bytes: c.used, Copies: len(c.copies), Skipped: len(c.skipped), Peak: c.peak}
		}
		return nil
	})
	return s
}

// wkey names one weight matrix: its allocation (so that a buffer allocated where a freed
// one was never matches) and the view's address, type and shape.
type wkey struct {
	alloc      *allocation
	ptr        uint64
	dt         tensor.DType
	rows, cols int
}

func keyOf(w *Buffer) wkey { return wkey{w.alloc, w.ptr, w.dt, w.rows, w.cols} }

// weightCache holds widened copies of weights for gemm, each in its own cuMemAlloc. It
// is touched under do only. A copy lives until its weight's allocation is freed (prune)
// or the device closes; weights must not be rewritten (Upload, kernels) once a batched
// MatMul has used them: Free and allocate them anew instead.
type weightCache struct {
	limit   int64
	used    int64
	peak    int64 // the most used has been
	copies  map[wkey]*allocation
	skipped map[wkey]struct{} // did not fit; forgotten when memory is freed
}

func newWeightCache(limit int64) *weightCache {
	return &weightCache{limit: limit, copies: map[wkey]*allocation{}, skipped: map[wkey]struct{}{}}
}

// widened returns the element size of the widened copy of a weight of dt and the kernel
// that writes it (names.go's table: no string formatted a call): F32 for BF16 weights (as
// gemmBF16 multiplies them), F16 for quantized ones; ok is false for F16 and F32
// weights, which gemm uses as they are.
func widened(dt tensor.DType) (elem int, kernel string, ok bool) {
	switch {
	case dt == tensor.BF16:
		return 4, "copy_bf16_f32", true
	case quantized(dt):
		return 2, kernelsOf(dt).dequant, true
	}
	return 0, "", false
}

// cachedWeight returns the address of w's widened copy, making it on first use when it
// fits; ok is false when gemm must widen w into scratch itself: no cache, a type gemm
// uses as it is, a graph being captured (no allocation there), or no room. It runs
// under do.
func (d *Device) cachedWeight(w *Buffer) (p C.CUdeviceptr, ok bool, err error) {
	c := d.wcache
	elem, _, wide := widened(w.dt)
	if c == nil || !wide {
		return 0, false, nil
	}
	k := keyOf(w)
	if a, hit := c.copies[k]; hit {
		return a.ptr, true, nil
	}
	if _, skip := c.skipped[k]; skip || d.capturing || w.alloc == nil {
		return 0, false, nil
	}
	size := int64(w.rows) * int64(w.cols) * int64(elem)
	var free, total C.size_t
	if err := check("cuMemGetInfo_v2", C.cu_mem_get_info(&free, &total)); err != nil {
		return 0, false, err
	}
	if !wcacheFits(size, c.used, c.limit, uint64(free), uint64(total)) {
		c.skipped[k] = struct{}{}
		return 0, false, nil
	}
	a := &allocation{size: int(size)}
	if check("cuMemAlloc_v2", C.cu_mem_alloc(&a.ptr, C.size_t(size))) != nil {
		c.skipped[k] = struct{}{} // out of memory after all: not an error, the scratch path works
		return 0, false, nil
	}
	if err := d.widen(d.stream, a.ptr, w); err != nil {
		return 0, false, errors.Join(err, a.release())
	}
	c.copies[k] = a
	c.used += size
	c.peak = max(c.peak, c.used)
	return a.ptr, true, nil
}

// widen enqueues on stream the kernel that writes w widened to dst: widened's kernel, or
// for quantized rows of whole blocks of 8 its dequant8 form when loaded; it runs under do.
func (d *Device) widen(stream C.CUstream, dst C.CUdeviceptr, w *Buffer) error {
	out, in := w.rows, w.cols
	_, kernel, _ := widened(w.dt)
	if w.dt == tensor.BF16 {
		a := new(args).ptr(uint64(dst)).ptr(w.ptr).u64(uint64(out * in))
		return d.launchOn(stream, kernel, dim3{min(ceilDiv(out*in, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a)
	}
	a := new(args).ptr(uint64(dst)).ptr(w.ptr).i32(in)
	if wide := dequant8Kernel(w.dt); in%8 == 0 && d.has(wide) {
		return d.launchOn(stream, wide, dim3{out, ceilDiv(in/8, threads), 1}, dim3{threads, 1, 1}, a)
	}
	return d.launchOn(stream, kernel, dim3{out, ceilDiv(in, threads), 1}, dim3{threads, 1, 1}, a)
}

// dequant8Kernel names the dequantization of a quantized type to F16 eight columns per
// thread (rows of whole blocks of 8); it may not be loaded.
func dequant8Kernel(dt tensor.DType) string { return kernelsOf(dt).dequant8 }

// prune releases the copies of weights whose allocation was freed, after the queued
// work that may read them, and forgets which weights did not fit, since memory was
// freed. It runs under do.
func (c *weightCache) prune(d *Device) error {
	clear(c.skipped)
	var stale []wkey
	for k := range c.copies {
		if _, live := d.allocs[k.alloc]; !live {
			stale = append(stale, k)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if err := check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)); err != nil {
		return err // keep the copies: queued kernels may still read them
	}
	var errs []error
	for _, k := range stale {
		a := c.copies[k]
		delete(c.copies, k)
		c.used -= int64(a.size)
		errs = append(errs, a.release())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("weight cache: %w", err)
	}
	return nil
}

// close releases every copy; it runs under do, after the stream has drained.
func (c *weightCache) close() error {
	if c == nil {
		return nil
	}
	var errs []error
	for k, a := range c.copies {
		errs = append(errs, a.release())
		delete(c.copies, k)
	}
	c.used = 0
	clear(c.skipped)
	return errors.Join(errs...)
}

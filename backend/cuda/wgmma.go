//go:build cgo

package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// The wgmma kernels (kernels/wgmma.cu) multiply prompt batches by quantized weights on
// Hopper's warpgroup MMA, decoding the blocks in registers: no dequantization pass and
// no F16 copy of the weights. The TMA copies each stage (tensor maps made per launch by
// cuTensorMapEncodeTiled, which the driver has from CUDA 12.0). Their module is
// compute_90a code, loaded on GPUs of compute capability 9.0 unless Options.NoWGMMA (or
// INFER_CUDA_WGMMA=0) turns it off; elsewhere and for the other formats gemm
// dequantizes for cuBLAS. gemm takes them only for the shapes they win on (wgWins).

// wgModule is the kernel module of the wgmma kernels.
const wgModule = "wgmma"

// WG_BM, WG_BN and WG_BK of wgmma.cu: weight rows and activation rows of a block's
// tile, columns of a stage; wgThreads its threads; wgAtom the bytes of one swizzled
// activation atom (WG_BN rows of 128 bytes).
const (
	wgRows    = 128
	wgTokens  = 128
	wgStage   = 128
	wgThreads = 256
	wgAtom    = wgTokens * 128
)

// wgStagesDefault is the pipeline depth gemm launches unless a test sets
// Device.wgStages.
const wgStagesDefault = 4

// wgStageSizes are the pipeline depths a wgmma kernel name is formatted for.
var wgStageSizes = [...]int{3, 4, 5}

// wgStageCounts are the pipeline depths dt's kernels come in (wg_<type>_s<N>): as many
// stages as fit the 227 KiB an H100/H200 block may have.
func wgStageCounts(dt tensor.DType) []int {
	if dt == tensor.Q4_0 {
		return wgStageSizes[:]
	}
	return wgStageSizes[:2]
}

// wgTypes are the weight formats with wgmma kernels.
var wgTypes = [...]tensor.DType{tensor.Q4_0, tensor.Q8_0}

// wgSmem is the dynamic shared memory of wg_<dt>_s<stages>: each stage holds two
// activation atoms and the weight rows (wgBox bytes apart, rounded up to 1 KiB), plus
// 1 KiB to align the first stage to 1 KiB, as the 128-byte swizzle wants.
func wgSmem(dt tensor.DType, stages int) int {
	w := wgRows * wgBox(dt)
	return stages*(2*wgAtom+((w+1023)&^1023)) + 1024
}

// wgBox is the bytes between weight rows in a stage (wbox of wgmma.cu): the stage's
// blocks rounded up to 16.
func wgBox(dt tensor.DType) int {
	return (wgStage/dt.BlockSize()*dt.RowBytes(dt.BlockSize()) + 15) &^ 15
}

// wgCapable reports whether the wgmma kernels are wanted and the device can run them:
// compute capability 9.0 exactly, as sm_90a code runs nowhere else, and a driver that
// makes tensor maps.
func (d *Device) wgCapable(want bool) bool {
	return want && d.info.Major == 9 && d.info.Minor == 0 && tmaDriver()
}

// prepareWG lets each loaded wgmma kernel use its dynamic shared memory, dropping one
// the GPU cannot give that much. It runs under do, after the kernels are loaded.
func (d *Device) prepareWG() {
	for _, dt := range wgTypes {
		for _, s := range wgStageCounts(dt) {
			name := wgName(dt, s)
			if f, ok := d.funcs[name]; ok && check("cuFuncSetAttribute", C.cu_func_set_attribute(f, cuFuncAttrMaxDynamicShared, C.int(wgSmem(dt, s)))) != nil {
				delete(d.funcs, name)
			}
		}
	}
}

// wgEntry is the wgmma kernel gemm can launch for w, or "" when it takes the
// dequantization path: a format without one, cols not a multiple of two stages, weights
// not 16-byte aligned (the TMA's rule), the kernels not on or switched off (tests:
// gemmTune.noWG). The checks before the name lookup keep the default path free of it.
func (d *Device) wgEntry(w *Buffer) string {
	if !d.wgOn || d.blas != nil && d.blas.tune.noWG || w.cols%(2*wgStage) != 0 || w.ptr%16 != 0 {
		return ""
	}
	if name := wgName(w.dt, d.wgDepth()); d.has(name) {
		return name
	}
	return ""
}

// wgWins reports whether gemm takes the wgmma kernel for a batch of n rows by w: when
// its grid is between three quarters of a wave and two waves of the GPU's SMs, where it
// beat dequantization + cuBLAS on an H200 (bench/RESULTS.md, 2026-12-02 00:50: the 4096-
// row outputs of a 512-token batch, 128 blocks, -6 to -12%; 344 blocks or more, or 32,
// and it loses). Tests (gemmTune.allWG) take it for every shape.
func (d *Device) wgWins(w *Buffer, n int) bool {
	if d.blas != nil && d.blas.tune.allWG {
		return true
	}
	blocks, sms := ceilDiv(w.rows, wgRows)*ceilDiv(n, wgTokens), d.info.SMs
	return 4*blocks >= 3*sms && blocks <= 2*sms
}

// wgDepth is the pipeline depth of the wgmma kernels gemm launches.
func (d *Device) wgDepth() int {
	if d.wgStages != 0 {
		return d.wgStages
	}
	return wgStagesDefault
}

// wgMatMul launches entry for o (n, w.rows) = x16 (the F16 activations, n rows) · wᵀ;
// it runs under do.
func (d *Device) wgMatMul(entry string, o, w *Buffer, x16 C.CUdeviceptr, n int) error {
	maps, err := d.tma.get()
	if err != nil {
		return err
	}
	if err := map2D(maps, tmapFloat16, uint64(x16), w.cols, n, 2*w.cols, wgStage/2, wgTokens, tmapSwizzle128); err != nil {
		return fmt.Errorf("kernel %s activations: %w", entry, err)
	}
	rowBytes := w.dt.RowBytes(w.cols)
	if err := map2D(unsafe.Add(maps, 128), tmapUint8, w.ptr, rowBytes, w.rows, rowBytes, wgBox(w.dt), wgRows, tmapSwizzleNo); err != nil {
		return fmt.Errorf("kernel %s weights: %w", entry, err)
	}
	grid := dim3{ceilDiv(w.rows, wgRows), ceilDiv(n, wgTokens), 1}
	r := launchMaps(d.funcs[entry], grid, wgThreads, wgSmem(w.dt, d.wgDepth()), d.stream, maps, o.ptr, w.rows, w.cols, n)
	if err := check("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("kernel %s grid %v: %w", entry, grid, err)
	}
	return nil
}

package cuda

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// cublasLoad loads libcublas once per process; a missing library only disables the
// GEMM path.
var cublasLoad = sync.OnceValue(func() bool {
	var missing *C.char
	return C.cublas_load(&missing) == 0
})

// cuBLAS and CUDA data-type constants (cublas_api.h, library_types.h).
const (
	blasOpN      = 0
	blasOpT      = 1
	cudaR32F     = 0
	cudaR16F     = 2
	blasCompute  = 68 // CUBLAS_COMPUTE_32F
	scalarsBytes = 8
)

// blas is a cuBLAS handle bound to the device stream, with its scalars in C memory and a
// grow-only scratch allocation for F16 operands.
type blas struct {
	h       C.cublasHandle_t
	scalars unsafe.Pointer // float alpha = 1, beta = 0
	scratch allocation     // out·in halves at most (a weight widened on the stream), grown on demand
	x16     *allocation    // the GEMM's activations in F16 (Device.scratch)
	x16Key  q8Key          // which activations x16 holds, as q8Key says for the q8 scratch
	tune    gemmTune
}

// gemmTune are the prefill path's choices that TestPrefillVariants compares; the zero
// value is the default and the only one outside tests (setGemmTune): no Option sets them.
type gemmTune struct {
	sideFirst bool // the dequantization side stream at the compute stream's priority
	noX16     bool // convert the activations for every GEMM (no reuse, no fused SwiGLU)
	noWG      bool // dequantize for cuBLAS even where a wgmma kernel would run
	allWG     bool // take a wgmma kernel for every shape it runs, not only where it wins (wgWins)
}

// setSMTarget makes cuBLAS size its GEMMs for n SMs (0: all of them), leaving the rest
// to the side stream's dequantizations; it runs under do. Only TestPrefillVariants
// calls it (a measured variant, not an option); it lives here because a _test.go file
// cannot use cgo.
func (b *blas) setSMTarget(n int) error {
	if st := C.cublas_set_sm_count_target(b.h, C.int(n)); st != 0 {
		return fmt.Errorf("cublasSetSmCountTarget(%d): status %d", n, int(st))
	}
	return nil
}

// newBLAS returns a handle on stream, or nil when cuBLAS is unavailable; it runs under do.
func newBLAS(stream C.CUstream) *blas {
	if !cublasLoad() {
		return nil
	}
	b := &blas{}
	if C.cublas_create(&b.h) != 0 {
		return nil
	}
	if C.cublas_set_stream(b.h, stream) != 0 {
		C.cublas_destroy(b.h)
		return nil
	}
	b.scalars = C.malloc(scalarsBytes)
	s := unsafe.Slice((*float32)(b.scalars), 2)
	s[0], s[1] = 1, 0
	return b
}

func (b *blas) close() error {
	if b == nil {
		return nil
	}
	var err error
	if b.scratch.ptr != 0 {
		err = b.scratch.release()
	}
	if st := C.cublas_destroy(b.h); st != 0 && err == nil {
		err = fmt.Errorf("cublasDestroy: status %d", int(st))
	}
	C.free(b.scalars)
	return err
}

// grows reports whether reserve(n) would replace the scratch allocation.
func (b *blas) grows(n int) bool { return n > b.scratch.size && b.scratch.ptr != 0 }

// reserve makes scratch at least n bytes; growing synchronises the stream first, since
// queued GEMMs may still read the old scratch.
func (b *blas) reserve(n int, stream C.CUstream) (C.CUdeviceptr, error) {
	if n <= b.scratch.size {
		return b.scratch.ptr, nil
	}
	if b.scratch.ptr != 0 {
		if err := check("cuStreamSynchronize", C.cu_stream_synchronize(stream)); err != nil {
			return 0, err
		}
	}
	if err := regrow(&b.scratch, n); err != nil {
		return 0, err
	}
	return b.scratch.ptr, nil
}

// regrow replaces a's memory, released if it has some, by a plain allocation of at least
// n bytes, rounded up to whole MiB; the caller first drains the work that may still use
// the old memory. It runs under do.
func regrow(a *allocation, n int) error {
	if a.ptr != 0 {
		if err := a.release(); err != nil {
			return err
		}
		*a = allocation{}
	}
	n = (n + 1<<20 - 1) &^ (1<<20 - 1)
	if err := check("cuMemAlloc_v2", C.cu_mem_alloc(&a.ptr, C.size_t(n))); err != nil {
		return err
	}
	a.size = n
	return nil
}

// gemm sets dst (n, out) F32 = x (n, in) · wᵀ, w (out, in), both of type typ (cudaR32F or
// cudaR16F), accumulating in F32. Row-major (n, out) is column-major (out, n), so this is
// C = op_T(W) · X in cuBLAS's terms.
func (b *blas) gemm(dst, w, x C.CUdeviceptr, typ, out, in, n int) error {
	alpha := (*C.float)(b.scalars)
	beta := (*C.float)(unsafe.Add(b.scalars, 4))
	st := C.cublas_gemm_ex(b.h, blasOpT, blasOpN, C.int(out), C.int(n), C.int(in), alpha,
		w, C.int(typ), C.int(in), x, C.int(typ), C.int(in), beta, dst, cudaR32F, C.int(out), blasCompute)
	if st != 0 {
		return fmt.Errorf("cublasGemmEx (%d×%d·%d): status %d", out, in, n, int(st))
	}
	return nil
}

//go:build cgo

package cuda

/*
#include <dlfcn.h>
#include <stdlib.h>
#include "driver.h"

typedef CUresult (*tma_encode_fn)(void *, int, unsigned, void *, const unsigned long long *,
                                  const unsigned long long *, const unsigned *, const unsigned *, int, int, int, int);
static tma_encode_fn tma_encode;

// tma_load resolves cuTensorMapEncodeTiled (CUDA 12.0 on); it returns 1 when tensor maps
// can be made. libcuda is already loaded (cu_load).
static int tma_load(void) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return 0;
	}
	tma_encode = (tma_encode_fn)dlsym(h, "cuTensorMapEncodeTiled");
	return tma_encode != NULL;
}

// tma_map_2d writes at map (64-byte aligned, 128 bytes) the tensor map of a row-major
// matrix at base: outer rows of inner elements of dtype, stride bytes apart, copied in
// boxes of box_inner x box_outer, with the given shared-memory swizzle, no interleave,
// 256-byte L2 promotion, and zeros past the ends.
static CUresult tma_map_2d(void *map, int dtype, CUdeviceptr base, unsigned long long inner, unsigned long long outer,
                           unsigned long long stride, unsigned box_inner, unsigned box_outer, int swizzle) {
	unsigned long long dims[2] = {inner, outer}, strides[1] = {stride};
	unsigned box[2] = {box_inner, box_outer}, steps[2] = {1, 1};
	return tma_encode(map, dtype, 2, (void *)base, dims, strides, box, steps, 0, swizzle, 3, 0);
}

// tma_launch launches f (a wgmma kernel: two tensor maps, then dst, rows, cols, n) through
// cuLaunchKernel's kernelParams, which give each parameter its own alignment (the maps'
// is 64 bytes). maps holds the two maps, 128 bytes apart.
static CUresult tma_launch(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned shmem, CUstream s, void *maps,
                           CUdeviceptr dst, int rows, int cols, int n) {
	void *params[] = {maps, (char *)maps + 128, &dst, &rows, &cols, &n};
	return cu_launch_kernel_params(f, gx, gy, 1, bx, 1, 1, shmem, s, params);
}

static void *tma_alloc(void) { return aligned_alloc(64, 256); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Tensor-map constants of cuda.h (CUtensorMapDataType, CUtensorMapSwizzle).
const (
	tmapUint8      = 0
	tmapFloat16    = 6
	tmapSwizzleNo  = 0
	tmapSwizzle128 = 3
)

// tmaDriver reports, once per process, whether the driver can encode tensor maps.
var tmaDriver = sync.OnceValue(func() bool { return C.tma_load() != 0 })

// tmaMaps is C memory for the two tensor maps of one wgmma launch (the driver copies
// kernel parameters at launch, so one per device is enough); it is allocated on first
// use and freed with the device.
type tmaMaps struct{ p unsafe.Pointer }

func (m *tmaMaps) get() (unsafe.Pointer, error) {
	if m.p == nil {
		if m.p = C.tma_alloc(); m.p == nil {
			return nil, fmt.Errorf("cuda: allocating the tensor maps failed")
		}
	}
	return m.p, nil
}

func (m *tmaMaps) close() error {
	if m.p != nil {
		C.free(m.p)
		m.p = nil
	}
	return nil
}

// map2D encodes at p the tensor map of a row-major matrix at base (outer rows of inner
// elements of dtype, stride bytes apart) copied in boxes of boxInner x boxOuter.
func map2D(p unsafe.Pointer, dtype int, base uint64, inner, outer, stride, boxInner, boxOuter, swizzle int) error {
	r := C.tma_map_2d(p, C.int(dtype), C.CUdeviceptr(base), C.ulonglong(inner), C.ulonglong(outer), C.ulonglong(stride),
		C.uint(boxInner), C.uint(boxOuter), C.int(swizzle))
	if err := check("cuTensorMapEncodeTiled", r); err != nil {
		return fmt.Errorf("tensor map %dx%d (stride %d, box %dx%d): %w", inner, outer, stride, boxInner, boxOuter, err)
	}
	return nil
}

// launchMaps launches f with the tensor maps at maps and dst, rows, cols, n.
func launchMaps(f C.CUfunction, grid dim3, threads, smem int, stream C.CUstream, maps unsafe.Pointer, dst uint64, rows, cols, n int) C.CUresult {
	return C.tma_launch(f, C.uint(grid.x), C.uint(grid.y), C.uint(threads), C.uint(smem), stream, maps,
		C.CUdeviceptr(dst), C.int(rows), C.int(cols), C.int(n))
}

//go:build cgo

package cuda

/*
#include <dlfcn.h>
#include <string.h>
#include "driver.h"

// pdl_attr and pdl_config are CUlaunchAttribute and CUlaunchConfig, laid out as in cuda.h.
typedef struct {
	int id;
	char pad[4];
	union {
		char raw[64];
		int value;
	} val;
} pdl_attr;

typedef struct {
	unsigned gx, gy, gz, bx, by, bz, smem;
	CUstream stream;
	pdl_attr *attrs;
	unsigned nattrs;
} pdl_config;

static CUresult (*pdl_launch_ex)(const pdl_config *, CUfunction, void **, void **);

// pdl_load resolves cuLaunchKernelEx when the driver is CUDA 12.3 or newer, the first whose
// stream capture keeps a programmatic dependency as a graph edge; it returns 1 when
// launches with PDL are possible. libcuda is already loaded (cu_load).
static int pdl_load(void) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return 0;
	}
	CUresult (*version)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
	int v = 0;
	if (version == NULL || version(&v) != 0 || v < 12030) {
		return 0;
	}
	pdl_launch_ex = (CUresult(*)(const pdl_config *, CUfunction, void **, void **))dlsym(h, "cuLaunchKernelEx");
	return pdl_launch_ex != NULL;
}

// pdl_launch is cu_launch through cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6) set.
static CUresult pdl_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                           unsigned bz, unsigned shmem, CUstream s, void *args, size_t size) {
	pdl_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.id = 6;
	attr.val.value = 1;
	pdl_config c = {gx, gy, gz, bx, by, bz, shmem, s, &attr, 1};
	void *extra[] = {
		(void *)1, args,  // CU_LAUNCH_PARAM_BUFFER_POINTER
		(void *)2, &size, // CU_LAUNCH_PARAM_BUFFER_SIZE
		(void *)0,        // CU_LAUNCH_PARAM_END
	};
	return pdl_launch_ex(&c, f, NULL, extra);
}
*/
import "C"

import (
	"log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Programmatic dependent launch (PDL, sm_90 and newer): a kernel launched with it may
// start while the kernel ahead of it in the stream is still running, and waits for that
// kernel's results itself (kernels/pdl.cuh): its launch and block scheduling overlap
// the kernel ahead, and the gap between two kernels of a decode step shrinks. Only
// kernels that wait that way are launched with it (pdlMarker: the mat-vecs, quantize_q8,
// the row norms), and only when their module's loaded code says it has the waits by
// defining a marker kernel (PDL_MARKER): machine code or PTX built for sm_90 or newer.
// The compute_80 PTX and the sm_80..sm_89 machine code have no marker, and a driver
// older than CUDA 12.3 gets no PDL launch either, so those run as before.

// Marker kernels of the modules launched with PDL.
const (
	pdlMatVec = "pdl_matvec" // matvec.cu
	pdlNorm   = "pdl_norm"   // norm.cu
)

// pdlMarkers lists the marker kernels (optional entries of kernelTable).
var pdlMarkers = []kernel{{"matvec", pdlMatVec, true}, {"norm", pdlNorm, true}}

// pdlMarker is the marker kernel of the module that defines entry, or "" when entry
// belongs to a module never launched with PDL.
func pdlMarker(entry string) string {
	switch {
	case strings.HasPrefix(entry, "mv_"), entry == "quantize_q8":
		return pdlMatVec
	case strings.HasPrefix(entry, "rms_norm_"):
		return pdlNorm
	}
	return ""
}

// pdlDriver reports, once per process, whether the driver can launch with PDL and the
// environment does not turn it off (INFER_CUDA_PDL=0: for comparisons).
var pdlDriver = sync.OnceValue(func() bool {
	if os.Getenv("INFER_CUDA_PDL") == "0" {
		return false
	}
	return C.pdl_load() != 0
})

// pdlRefused is set by the first PDL launch the driver refused as invalid: every later
// launch goes without PDL (the kernels' waits return at once without the attribute).
// It is per process because cuLaunch, which sees the refusal, is not told the device.
var pdlRefused atomic.Bool

// pdl reports whether entry is launched with PDL on d; it runs under do.
func (d *Device) pdl(entry string) bool {
	m := pdlMarker(entry)
	return m != "" && d.has(m) && pdlDriver() && !pdlRefused.Load()
}

// cuLaunch launches f with the packed parameters at p (n bytes), with PDL when withPDL.
// A PDL launch the driver refuses as invalid (CUDA_ERROR_INVALID_VALUE) goes through
// cuLaunchKernel instead, as does every launch after it (pdlRefused), and one log line
// says so.
func cuLaunch(f C.CUfunction, grid, block dim3, smem int, stream C.CUstream, p unsafe.Pointer, n int, withPDL bool) C.CUresult {
	if withPDL {
		r := C.pdl_launch(f, C.uint(grid.x), C.uint(grid.y), C.uint(grid.z), C.uint(block.x), C.uint(block.y),
			C.uint(block.z), C.uint(smem), stream, p, C.size_t(n))
		if Result(r) != ErrInvalidValue {
			return r // launched, or a failure of the launch itself
		}
		if !pdlRefused.Swap(true) {
			log.Printf("%v: the driver refuses programmatic dependent launch; kernels launch without it from now on", check("cuLaunchKernelEx", r))
		}
	}
	return C.cu_launch(f, C.uint(grid.x), C.uint(grid.y), C.uint(grid.z), C.uint(block.x), C.uint(block.y),
		C.uint(block.z), C.uint(smem), stream, p, C.size_t(n))
}

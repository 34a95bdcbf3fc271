// driver.c: dlopen of libcuda.so.1 and libcublas, and thin wrappers over the resolved
// entry points (Go cannot call C function pointers directly).
#include <dlfcn.h>
#include <stddef.h>
#include "driver.h"

// Each X(field, symbol, return, parameters) names one driver entry point; the _v2
// symbols are the ones current drivers export for the unsuffixed cuda.h names.
#define CU_FUNCS(X) \
	X(init, "cuInit", CUresult, (unsigned)) \
	X(get_error_name, "cuGetErrorName", CUresult, (CUresult, const char **)) \
	X(device_get_count, "cuDeviceGetCount", CUresult, (int *)) \
	X(device_get, "cuDeviceGet", CUresult, (CUdevice *, int)) \
	X(device_get_name, "cuDeviceGetName", CUresult, (char *, int, CUdevice)) \
	X(device_get_attribute, "cuDeviceGetAttribute", CUresult, (int *, int, CUdevice)) \
	X(device_total_mem, "cuDeviceTotalMem_v2", CUresult, (size_t *, CUdevice)) \
	X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice)) \
	X(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice)) \
	X(ctx_set_current, "cuCtxSetCurrent", CUresult, (CUcontext)) \
	X(ctx_synchronize, "cuCtxSynchronize", CUresult, (void)) \
	X(mem_get_info, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *)) \
	X(mem_alloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t)) \
	X(mem_free, "cuMemFree_v2", CUresult, (CUdeviceptr)) \
	X(mem_alloc_host, "cuMemAllocHost_v2", CUresult, (void **, size_t)) \
	X(mem_free_host, "cuMemFreeHost", CUresult, (void *)) \
	X(memcpy_htod_async, "cuMemcpyHtoDAsync_v2", CUresult, (CUdeviceptr, const void *, size_t, CUstream)) \
	X(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2", CUresult, (void *, CUdeviceptr, size_t, CUstream)) \
	X(memcpy_dtod_async, "cuMemcpyDtoDAsync_v2", CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	X(memcpy_peer_async, "cuMemcpyPeerAsync", CUresult, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
	X(memset_d8_async, "cuMemsetD8Async", CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
	X(stream_create, "cuStreamCreate", CUresult, (CUstream *, unsigned)) \
	X(stream_create_with_priority, "cuStreamCreateWithPriority", CUresult, (CUstream *, unsigned, int)) \
	X(stream_synchronize, "cuStreamSynchronize", CUresult, (CUstream)) \
	X(stream_destroy, "cuStreamDestroy_v2", CUresult, (CUstream)) \
	X(stream_wait_event, "cuStreamWaitEvent", CUresult, (CUstream, CUevent, unsigned)) \
	X(event_create, "cuEventCreate", CUresult, (CUevent *, unsigned)) \
	X(event_record, "cuEventRecord", CUresult, (CUevent, CUstream)) \
	X(event_synchronize, "cuEventSynchronize", CUresult, (CUevent)) \
	X(event_elapsed_time, "cuEventElapsedTime", CUresult, (float *, CUevent, CUevent)) \
	X(event_destroy, "cuEventDestroy_v2", CUresult, (CUevent)) \
	X(module_load_data, "cuModuleLoadData", CUresult, (CUmodule *, const void *)) \
	X(module_unload, "cuModuleUnload", CUresult, (CUmodule)) \
	X(module_get_function, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *)) \
	X(func_set_attribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int)) \
	X(launch_kernel, "cuLaunchKernel", CUresult, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **)) \
	X(stream_begin_capture, "cuStreamBeginCapture_v2", CUresult, (CUstream, int)) \
	X(stream_end_capture, "cuStreamEndCapture", CUresult, (CUstream, CUgraph *)) \
	X(graph_instantiate, "cuGraphInstantiateWithFlags", CUresult, (CUgraphExec *, CUgraph, unsigned long long)) \
	X(graph_launch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream)) \
	X(graph_exec_destroy, "cuGraphExecDestroy", CUresult, (CUgraphExec)) \
	X(graph_destroy, "cuGraphDestroy", CUresult, (CUgraph)) \
	X(mem_create, "cuMemCreate", CUresult, (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long)) \
	X(mem_address_reserve, "cuMemAddressReserve", CUresult, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long)) \
	X(mem_map, "cuMemMap", CUresult, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)) \
	X(mem_set_access, "cuMemSetAccess", CUresult, (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t)) \
	X(mem_unmap, "cuMemUnmap", CUresult, (CUdeviceptr, size_t)) \
	X(mem_release, "cuMemRelease", CUresult, (CUmemGenericAllocationHandle)) \
	X(mem_address_free, "cuMemAddressFree", CUresult, (CUdeviceptr, size_t)) \
	X(mem_get_granularity, "cuMemGetAllocationGranularity", CUresult, (size_t *, const CUmemAllocationProp *, int)) \
	X(device_can_access_peer, "cuDeviceCanAccessPeer", CUresult, (int *, CUdevice, CUdevice)) \
	X(ctx_enable_peer_access, "cuCtxEnablePeerAccess", CUresult, (CUcontext, unsigned)) \
	X(device_get_p2p_attribute, "cuDeviceGetP2PAttribute", CUresult, (int *, int, CUdevice, CUdevice)) \
	X(mem_host_alloc, "cuMemHostAlloc", CUresult, (void **, size_t, unsigned))

#define CUBLAS_FUNCS(X) \
	X(create, "cublasCreate_v2", int, (cublasHandle_t *)) \
	X(destroy, "cublasDestroy_v2", int, (cublasHandle_t)) \
	X(set_stream, "cublasSetStream_v2", int, (cublasHandle_t, CUstream)) \
	X(gemm_ex, "cublasGemmEx", int, (cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int, const void *, void *, int, int, int, int))

#define FIELD(f, sym, ret, params) ret(*f) params;
static struct { CU_FUNCS(FIELD) } cu;
static struct { CUBLAS_FUNCS(FIELD) } cublas;
// cublasSetSmCountTarget (cuBLAS 11.3 on) is optional: NULL when the library lacks it.
static int (*cublas_sm_count_target)(cublasHandle_t, int);
#undef FIELD

int cu_load(const char **missing) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		*missing = "libcuda.so.1";
		return 1;
	}
#define RESOLVE(f, sym, ret, params) \
	if ((TABLE.f = (ret(*) params)dlsym(h, sym)) == NULL) { \
		*missing = sym; \
		return 2; \
	}
#define TABLE cu
	CU_FUNCS(RESOLVE)
#undef TABLE
	return 0;
}

int cublas_load(const char **missing) {
	static const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
	void *h = NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0] && h == NULL; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (h == NULL) {
		*missing = "libcublas.so";
		return 1;
	}
#define TABLE cublas
	CUBLAS_FUNCS(RESOLVE)
#undef TABLE
#undef RESOLVE
	cublas_sm_count_target = (int (*)(cublasHandle_t, int))dlsym(h, "cublasSetSmCountTarget");
	return 0;
}

const char *cu_error_name(CUresult r) {
	const char *s = NULL;
	if (cu.get_error_name == NULL || cu.get_error_name(r, &s) != 0) {
		return NULL;
	}
	return s;
}

CUresult cu_init(unsigned flags) { return cu.init(flags); }
CUresult cu_device_get_count(int *n) { return cu.device_get_count(n); }
CUresult cu_device_get(CUdevice *d, int ordinal) { return cu.device_get(d, ordinal); }
CUresult cu_device_get_name(char *name, int len, CUdevice d) { return cu.device_get_name(name, len, d); }
CUresult cu_device_get_attribute(int *v, int attr, CUdevice d) { return cu.device_get_attribute(v, attr, d); }
CUresult cu_device_total_mem(size_t *bytes, CUdevice d) { return cu.device_total_mem(bytes, d); }
CUresult cu_primary_ctx_retain(CUcontext *c, CUdevice d) { return cu.primary_ctx_retain(c, d); }
CUresult cu_primary_ctx_release(CUdevice d) { return cu.primary_ctx_release(d); }
CUresult cu_ctx_set_current(CUcontext c) { return cu.ctx_set_current(c); }
CUresult cu_ctx_synchronize(void) { return cu.ctx_synchronize(); }
CUresult cu_mem_get_info(size_t *free_, size_t *total) { return cu.mem_get_info(free_, total); }
CUresult cu_mem_alloc(CUdeviceptr *p, size_t n) { return cu.mem_alloc(p, n); }
CUresult cu_mem_free(CUdeviceptr p) { return cu.mem_free(p); }
CUresult cu_mem_alloc_host(void **p, size_t n) { return cu.mem_alloc_host(p, n); }
CUresult cu_mem_free_host(void *p) { return cu.mem_free_host(p); }
CUresult cu_memcpy_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return cu.memcpy_htod_async(dst, src, n, s); }
CUresult cu_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s) { return cu.memcpy_dtoh_async(dst, src, n, s); }
CUresult cu_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return cu.memcpy_dtod_async(dst, src, n, s); }
CUresult cu_memcpy_peer_async(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s) {
	return cu.memcpy_peer_async(dst, dctx, src, sctx, n, s);
}
CUresult cu_memset_d8_async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) { return cu.memset_d8_async(dst, v, n, s); }
CUresult cu_stream_create(CUstream *s, unsigned flags) { return cu.stream_create(s, flags); }
CUresult cu_stream_create_with_priority(CUstream *s, unsigned flags, int priority) { return cu.stream_create_with_priority(s, flags, priority); }
CUresult cu_stream_synchronize(CUstream s) { return cu.stream_synchronize(s); }
CUresult cu_stream_destroy(CUstream s) { return cu.stream_destroy(s); }
CUresult cu_stream_wait_event(CUstream s, CUevent e, unsigned flags) { return cu.stream_wait_event(s, e, flags); }
CUresult cu_event_create(CUevent *e, unsigned flags) { return cu.event_create(e, flags); }
CUresult cu_event_record(CUevent e, CUstream s) { return cu.event_record(e, s); }
CUresult cu_event_synchronize(CUevent e) { return cu.event_synchronize(e); }
CUresult cu_event_elapsed_time(float *ms, CUevent start, CUevent end) { return cu.event_elapsed_time(ms, start, end); }
CUresult cu_event_destroy(CUevent e) { return cu.event_destroy(e); }
CUresult cu_module_load_data(CUmodule *m, const void *image) { return cu.module_load_data(m, image); }
CUresult cu_module_unload(CUmodule m) { return cu.module_unload(m); }
CUresult cu_module_get_function(CUfunction *f, CUmodule m, const char *name) { return cu.module_get_function(f, m, name); }
CUresult cu_func_set_attribute(CUfunction f, int attr, int value) { return cu.func_set_attribute(f, attr, value); }

CUresult cu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, CUstream s, void *args, size_t size) {
	void *extra[] = {
		(void *)1, args,  // CU_LAUNCH_PARAM_BUFFER_POINTER
		(void *)2, &size, // CU_LAUNCH_PARAM_BUFFER_SIZE
		(void *)0,        // CU_LAUNCH_PARAM_END
	};
	return cu.launch_kernel(f, gx, gy, gz, bx, by, bz, shmem, s, NULL, extra);
}

CUresult cu_launch_kernel_params(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, CUstream s, void **params) {
	return cu.launch_kernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

CUresult cu_stream_begin_capture(CUstream s, int mode) { return cu.stream_begin_capture(s, mode); }
CUresult cu_stream_end_capture(CUstream s, CUgraph *g) { return cu.stream_end_capture(s, g); }
CUresult cu_graph_instantiate(CUgraphExec *e, CUgraph g) { return cu.graph_instantiate(e, g, 0); }
CUresult cu_graph_launch(CUgraphExec e, CUstream s) { return cu.graph_launch(e, s); }
CUresult cu_graph_exec_destroy(CUgraphExec e) { return cu.graph_exec_destroy(e); }
CUresult cu_graph_destroy(CUgraph g) { return cu.graph_destroy(g); }
CUresult cu_mem_create(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop) { return cu.mem_create(h, n, prop, 0); }
CUresult cu_mem_address_reserve(CUdeviceptr *p, size_t n, size_t align) { return cu.mem_address_reserve(p, n, align, 0, 0); }
CUresult cu_mem_map(CUdeviceptr p, size_t n, CUmemGenericAllocationHandle h) { return cu.mem_map(p, n, 0, h, 0); }
CUresult cu_mem_set_access(CUdeviceptr p, size_t n, const CUmemAccessDesc *desc, size_t count) { return cu.mem_set_access(p, n, desc, count); }
CUresult cu_mem_unmap(CUdeviceptr p, size_t n) { return cu.mem_unmap(p, n); }
CUresult cu_mem_release(CUmemGenericAllocationHandle h) { return cu.mem_release(h); }
CUresult cu_mem_address_free(CUdeviceptr p, size_t n) { return cu.mem_address_free(p, n); }
CUresult cu_mem_get_granularity(size_t *g, const CUmemAllocationProp *prop, int option) { return cu.mem_get_granularity(g, prop, option); }
CUresult cu_device_can_access_peer(int *can, CUdevice d, CUdevice peer) { return cu.device_can_access_peer(can, d, peer); }
CUresult cu_ctx_enable_peer_access(CUcontext peer, unsigned flags) { return cu.ctx_enable_peer_access(peer, flags); }
CUresult cu_device_get_p2p_attribute(int *v, int attr, CUdevice src, CUdevice dst) { return cu.device_get_p2p_attribute(v, attr, src, dst); }
CUresult cu_mem_host_alloc(void **p, size_t n, unsigned flags) { return cu.mem_host_alloc(p, n, flags); }

int cublas_create(cublasHandle_t *h) { return cublas.create(h); }
int cublas_destroy(cublasHandle_t h) { return cublas.destroy(h); }
int cublas_set_stream(cublasHandle_t h, CUstream s) { return cublas.set_stream(h, s); }
int cublas_set_sm_count_target(cublasHandle_t h, int n) {
	return cublas_sm_count_target == NULL ? -1 : cublas_sm_count_target(h, n);
}
int cublas_gemm_ex(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                   CUdeviceptr a, int atype, int lda, CUdeviceptr b, int btype, int ldb,
                   const float *beta, CUdeviceptr c, int ctype, int ldc, int compute) {
	return cublas.gemm_ex(h, ta, tb, m, n, k, alpha, (const void *)a, atype, lda, (const void *)b, btype, ldb,
	                      beta, (void *)c, ctype, ldc, compute, -1 /* CUBLAS_GEMM_DEFAULT */);
}

// driver.h: the slice of the CUDA driver API (cuda.h) and cuBLAS that package cuda uses,
// written by hand so that the package builds without a CUDA toolkit. The libraries are
// loaded with dlopen at run time; every entry point is reached through a pointer table
// filled by cu_load and called through the cu_* wrappers below.
#ifndef INFER_CUDA_DRIVER_H
#define INFER_CUDA_DRIVER_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

// CUmemLocation, CUmemAllocationProp and CUmemAccessDesc, laid out as in cuda.h.
typedef struct {
	int type; // CU_MEM_LOCATION_TYPE_DEVICE = 1
	int id;
} CUmemLocation;

typedef struct {
	int type;                 // CU_MEM_ALLOCATION_TYPE_PINNED = 1
	int requestedHandleTypes; // CU_MEM_HANDLE_TYPE_NONE = 0
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef struct {
	CUmemLocation location;
	int flags; // CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
} CUmemAccessDesc;

// cu_load opens libcuda.so.1 and resolves every entry point; it returns 0 on success,
// 1 when the library is missing and 2 when a symbol is missing (its name in *missing).
int cu_load(const char **missing);
// cublas_load opens libcublas; it returns 0 on success.
int cublas_load(const char **missing);
// cu_error_name returns the driver's name for r, or NULL.
const char *cu_error_name(CUresult r);

CUresult cu_init(unsigned flags);
CUresult cu_device_get_count(int *n);
CUresult cu_device_get(CUdevice *d, int ordinal);
CUresult cu_device_get_name(char *name, int len, CUdevice d);
CUresult cu_device_get_attribute(int *v, int attr, CUdevice d);
CUresult cu_device_total_mem(size_t *bytes, CUdevice d);
CUresult cu_primary_ctx_retain(CUcontext *c, CUdevice d);
CUresult cu_primary_ctx_release(CUdevice d);
CUresult cu_ctx_set_current(CUcontext c);
CUresult cu_ctx_synchronize(void);
CUresult cu_mem_get_info(size_t *free_, size_t *total);
CUresult cu_mem_alloc(CUdeviceptr *p, size_t n);
CUresult cu_mem_free(CUdeviceptr p);
CUresult cu_mem_alloc_host(void **p, size_t n);
CUresult cu_mem_free_host(void *p);
CUresult cu_memcpy_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cu_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cu_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cu_memcpy_peer_async(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s);
CUresult cu_memset_d8_async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
CUresult cu_stream_create(CUstream *s, unsigned flags);
// cu_stream_create_with_priority is cuStreamCreateWithPriority: a priority outside the
// context's range is clamped to it (lower numbers run first).
CUresult cu_stream_create_with_priority(CUstream *s, unsigned flags, int priority);
CUresult cu_stream_synchronize(CUstream s);
CUresult cu_stream_destroy(CUstream s);
CUresult cu_stream_wait_event(CUstream s, CUevent e, unsigned flags);
CUresult cu_event_create(CUevent *e, unsigned flags);
CUresult cu_event_record(CUevent e, CUstream s);
CUresult cu_event_synchronize(CUevent e);
CUresult cu_event_elapsed_time(float *ms, CUevent start, CUevent end);
CUresult cu_event_destroy(CUevent e);
CUresult cu_module_load_data(CUmodule *m, const void *image);
CUresult cu_module_unload(CUmodule m);
CUresult cu_module_get_function(CUfunction *f, CUmodule m, const char *name);
CUresult cu_func_set_attribute(CUfunction f, int attr, int value);
// cu_launch launches f with its parameters packed in args (size bytes), through the
// CU_LAUNCH_PARAM_BUFFER_POINTER form of cuLaunchKernel's extra argument.
CUresult cu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, CUstream s, void *args, size_t size);
// cu_launch_kernel_params launches f with kernelParams: params[i] points at parameter i.
CUresult cu_launch_kernel_params(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, CUstream s, void **params);
CUresult cu_stream_begin_capture(CUstream s, int mode);
CUresult cu_stream_end_capture(CUstream s, CUgraph *g);
CUresult cu_graph_instantiate(CUgraphExec *e, CUgraph g);
CUresult cu_graph_launch(CUgraphExec e, CUstream s);
CUresult cu_graph_exec_destroy(CUgraphExec e);
CUresult cu_graph_destroy(CUgraph g);
CUresult cu_mem_create(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop);
CUresult cu_mem_address_reserve(CUdeviceptr *p, size_t n, size_t align);
CUresult cu_mem_map(CUdeviceptr p, size_t n, CUmemGenericAllocationHandle h);
CUresult cu_mem_set_access(CUdeviceptr p, size_t n, const CUmemAccessDesc *desc, size_t count);
CUresult cu_mem_unmap(CUdeviceptr p, size_t n);
CUresult cu_mem_release(CUmemGenericAllocationHandle h);
CUresult cu_mem_address_free(CUdeviceptr p, size_t n);
CUresult cu_mem_get_granularity(size_t *g, const CUmemAllocationProp *prop, int option);
CUresult cu_device_can_access_peer(int *can, CUdevice d, CUdevice peer);
CUresult cu_ctx_enable_peer_access(CUcontext peer, unsigned flags);
CUresult cu_device_get_p2p_attribute(int *v, int attr, CUdevice src, CUdevice dst);
// cu_mem_host_alloc is cuMemHostAlloc: pinned host memory; flag 1 (PORTABLE) makes it
// pinned for every context, as staged transfers between devices need.
CUresult cu_mem_host_alloc(void **p, size_t n, unsigned flags);

// cuBLAS (status 0 is success).
typedef struct cublasContext *cublasHandle_t;
int cublas_create(cublasHandle_t *h);
int cublas_destroy(cublasHandle_t h);
int cublas_set_stream(cublasHandle_t h, CUstream s);
// cublas_set_sm_count_target is cublasSetSmCountTarget (0: every SM); -1 when the
// library has no such function.
int cublas_set_sm_count_target(cublasHandle_t h, int n);
// cublas_gemm_ex computes C (m, n) = alpha·op(A)·op(B) + beta·C in column-major
// storage; alpha and beta are float host scalars read at call time.
int cublas_gemm_ex(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                   CUdeviceptr a, int atype, int lda, CUdeviceptr b, int btype, int ldb,
                   const float *beta, CUdeviceptr c, int ctype, int ldc, int compute);

#endif

//go:build cgo

// nccl.c: dlopen of libnccl.so.2 and thin wrappers over the resolved entry points.

#include <dlfcn.h>
#include "nccl.h"

#define NCCL_FUNCS(X) \
	X(get_error_string, "ncclGetErrorString", const char *, (ncclResult_t)) \
	X(get_version, "ncclGetVersion", ncclResult_t, (int *)) \
	X(get_unique_id, "ncclGetUniqueId", ncclResult_t, (ncclUniqueId *)) \
	X(comm_init_rank, "ncclCommInitRank", ncclResult_t, (ncclComm_t *, int, ncclUniqueId, int)) \
	X(send, "ncclSend", ncclResult_t, (const void *, size_t, int, int, ncclComm_t, cudaStream_t)) \
	X(recv, "ncclRecv", ncclResult_t, (void *, size_t, int, int, ncclComm_t, cudaStream_t)) \
	X(group_start, "ncclGroupStart", ncclResult_t, (void)) \
	X(group_end, "ncclGroupEnd", ncclResult_t, (void)) \
	X(comm_get_async_error, "ncclCommGetAsyncError", ncclResult_t, (ncclComm_t, ncclResult_t *)) \
	X(comm_abort, "ncclCommAbort", ncclResult_t, (ncclComm_t)) \
	X(comm_destroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t))

#define FIELD(f, sym, ret, params) ret(*f) params;
static struct { NCCL_FUNCS(FIELD) } nccl;
#undef FIELD

int nccl_load(const char **missing) {
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
	}
	if (h == NULL) {
		*missing = "libnccl.so.2";
		return 1;
	}
#define RESOLVE(f, sym, ret, params) \
	if ((nccl.f = (ret(*) params)dlsym(h, sym)) == NULL) { \
		*missing = sym; \
		return 2; \
	}
	NCCL_FUNCS(RESOLVE)
#undef RESOLVE
	return 0;
}

const char *nccl_error_string(ncclResult_t r) {
	return nccl.get_error_string == NULL ? NULL : nccl.get_error_string(r);
}
ncclResult_t nccl_get_version(int *v) { return nccl.get_version(v); }
ncclResult_t nccl_get_unique_id(ncclUniqueId *id) { return nccl.get_unique_id(id); }
ncclResult_t nccl_comm_init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank) {
	return nccl.comm_init_rank(comm, nranks, *id, rank);
}
ncclResult_t nccl_send(unsigned long long buf, size_t bytes, int peer, ncclComm_t comm, cudaStream_t s) {
	return nccl.send((const void *)buf, bytes, inferNcclUint8, peer, comm, s);
}
ncclResult_t nccl_recv(unsigned long long buf, size_t bytes, int peer, ncclComm_t comm, cudaStream_t s) {
	return nccl.recv((void *)buf, bytes, inferNcclUint8, peer, comm, s);
}
ncclResult_t nccl_group_start(void) { return nccl.group_start(); }
ncclResult_t nccl_group_end(void) { return nccl.group_end(); }
ncclResult_t nccl_comm_get_async_error(ncclComm_t comm, ncclResult_t *err) {
	return nccl.comm_get_async_error(comm, err);
}
ncclResult_t nccl_comm_abort(ncclComm_t comm) { return nccl.comm_abort(comm); }
ncclResult_t nccl_comm_destroy(ncclComm_t comm) { return nccl.comm_destroy(comm); }

// nccl.h: the slice of NCCL's API (nccl.h) that package nccl uses, written by hand so
// that the package builds without NCCL's headers. libnccl.so.2 is loaded with dlopen at
// run time; every entry point is reached through a pointer table filled by nccl_load.
#ifndef INFER_NCCL_H
#define INFER_NCCL_H

#include <stddef.h>

typedef int ncclResult_t; // ncclSuccess = 0, ncclInProgress = 7
typedef struct ncclComm *ncclComm_t;
typedef struct CUstream_st *cudaStream_t;

#define INFER_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
	char internal[INFER_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

enum { inferNcclUint8 = 1 }; // ncclUint8 in ncclDataType_t

// nccl_load opens libnccl.so.2 and resolves every entry point: 0 on success, 1 when the
// library is missing, 2 when a symbol is missing (its name in *missing).
int nccl_load(const char **missing);

const char *nccl_error_string(ncclResult_t r);
ncclResult_t nccl_get_version(int *v);
ncclResult_t nccl_get_unique_id(ncclUniqueId *id);
ncclResult_t nccl_comm_init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank);
ncclResult_t nccl_send(unsigned long long buf, size_t bytes, int peer, ncclComm_t comm, cudaStream_t s);
ncclResult_t nccl_recv(unsigned long long buf, size_t bytes, int peer, ncclComm_t comm, cudaStream_t s);
ncclResult_t nccl_group_start(void);
ncclResult_t nccl_group_end(void);
ncclResult_t nccl_comm_get_async_error(ncclComm_t comm, ncclResult_t *err);
ncclResult_t nccl_comm_abort(ncclComm_t comm);
ncclResult_t nccl_comm_destroy(ncclComm_t comm);

#endif

// Package nccl binds the few NCCL calls a multi-process pipeline needs: a unique id,
// a communicator per rank, point-to-point send and receive on a CUDA stream, and the
// fault calls (asynchronous error, abort). libnccl.so.2 is loaded with dlopen the first
// time it is needed, so the package builds without NCCL; where it is missing, or the
// build has no cgo, every call fails with an error that says "NCCL not found".
//
// Transport moves the hidden state of a split model between the ranks of package dist
// with ncclSend/ncclRecv on each rank's CUDA device stream.
package nccl

import "errors"

// ErrNotFound is returned (wrapped) when libnccl.so.2 cannot be loaded.
var ErrNotFound = errors.New("NCCL not found")

// ErrAborted is what a communicator's calls return after Abort: the end this process
// asked for, not an asynchronous failure.
var ErrAborted = errors.New("nccl: communicator aborted")

// UniqueID is an NCCL unique id: rank 0 makes it and every rank passes it to InitRank.
type UniqueID [128]byte

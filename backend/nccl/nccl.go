//go:build cgo

package nccl

/*
#cgo LDFLAGS: -ldl
#include "nccl.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// lib is the outcome of loading libnccl once per process (the handle lives in C).
var lib struct {
	once sync.Once
	err  error
}

// Load opens libnccl.so.2 and resolves its entry points, once.
func Load() error {
	lib.once.Do(func() {
		var missing *C.char
		switch C.nccl_load(&missing) {
		case 0:
		case 1:
			lib.err = fmt.Errorf("%w: %s cannot be loaded (install NCCL or add it to LD_LIBRARY_PATH)", ErrNotFound, C.GoString(missing))
		default:
			lib.err = fmt.Errorf("%w: libnccl.so.2 has no %s (too old?)", ErrNotFound, C.GoString(missing))
		}
	})
	return lib.err
}

// check turns an NCCL result into an error naming op.
func check(op string, r C.ncclResult_t) error {
	if r == 0 {
		return nil
	}
	msg := "unknown error"
	if s := C.nccl_error_string(r); s != nil {
		msg = C.GoString(s)
	}
	return fmt.Errorf("nccl: %s: %s (%d)", op, msg, int(r))
}

// Version is the loaded library's version, e.g. 22703 for 2.27.3.
func Version() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var v C.int
	return int(v), check("ncclGetVersion", C.nccl_get_version(&v))
}

// GetUniqueID makes the id rank 0 hands every rank.
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	if err := Load(); err != nil {
		return id, err
	}
	var cid C.ncclUniqueId
	if err := check("ncclGetUniqueId", C.nccl_get_unique_id(&cid)); err != nil {
		return id, err
	}
	copy(id[:], C.GoBytes(unsafe.Pointer(&cid.internal[0]), C.INFER_NCCL_UNIQUE_ID_BYTES))
	return id, nil
}

// Comm is one rank's NCCL communicator.
type Comm struct {
	mu      sync.Mutex
	c       C.ncclComm_t
	aborted bool
}

// InitRank joins the communicator of world ranks that id names as rank. It blocks until
// every rank has joined, and uses the CUDA device current on the calling thread: call it
// inside the device's context (cuda.Device.WithStream).
func InitRank(world int, id UniqueID, rank int) (*Comm, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var cid C.ncclUniqueId
	for i, b := range id {
		cid.internal[i] = C.char(b)
	}
	var c C.ncclComm_t
	if err := check("ncclCommInitRank", C.nccl_comm_init_rank(&c, C.int(world), &cid, C.int(rank))); err != nil {
		return nil, err
	}
	return &Comm{c: c}, nil
}

// handle returns the communicator, or an error once it was aborted.
func (c *Comm) handle() (C.ncclComm_t, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted || c.c == nil {
		return nil, ErrAborted
	}
	return c.c, nil
}

// Send enqueues bytes at device address ptr to peer on stream (a CUstream).
func (c *Comm) Send(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	return check("ncclSend", C.nccl_send(C.ulonglong(ptr), C.size_t(bytes), C.int(peer), h, C.cudaStream_t(stream)))
}

// Recv enqueues the receipt of bytes from peer into device address ptr on stream.
func (c *Comm) Recv(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	return check("ncclRecv", C.nccl_recv(C.ulonglong(ptr), C.size_t(bytes), C.int(peer), h, C.cudaStream_t(stream)))
}

// GroupStart and GroupEnd bracket sends and receives issued together.
func GroupStart() error { return check("ncclGroupStart", C.nccl_group_start()) }

// GroupEnd ends the group GroupStart began.
func GroupEnd() error { return check("ncclGroupEnd", C.nccl_group_end()) }

// AsyncError is the communicator's asynchronous failure (a peer gone, a network
// error), or nil.
func (c *Comm) AsyncError() error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	var r C.ncclResult_t
	if err := check("ncclCommGetAsyncError", C.nccl_comm_get_async_error(h, &r)); err != nil {
		return err
	}
	if r == 7 { // ncclInProgress: not an error
		return nil
	}
	return check("communicator", r)
}

// Abort ends the communicator at once, failing its pending operations so that no
// stream waits forever on a peer that is gone. Later calls do nothing.
func (c *Comm) Abort() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted || c.c == nil {
		return nil
	}
	c.aborted = true
	return check("ncclCommAbort", C.nccl_comm_abort(c.c))
}

// Destroy releases the communicator after its operations completed (Abort if they
// cannot).
func (c *Comm) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted || c.c == nil {
		return nil
	}
	h := c.c
	c.c = nil
	return check("ncclCommDestroy", C.nccl_comm_destroy(h))
}

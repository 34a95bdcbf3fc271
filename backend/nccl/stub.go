//go:build !cgo

package nccl

import (
	"fmt"
	"unsafe"
)

// errNoCgo is every call's error in a build without cgo.
var errNoCgo = fmt.Errorf("%w: this infer was built without cgo", ErrNotFound)

// Load fails: without cgo there is no NCCL.
func Load() error { return errNoCgo }

// Version fails without cgo.
func Version() (int, error) { return 0, errNoCgo }

// GetUniqueID fails without cgo.
func GetUniqueID() (UniqueID, error) { return UniqueID{}, errNoCgo }

// Comm is a communicator; without cgo there is none.
type Comm struct{}

// InitRank fails without cgo.
func InitRank(world int, id UniqueID, rank int) (*Comm, error) { return nil, errNoCgo }

// Send fails without cgo.
func (c *Comm) Send(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error { return errNoCgo }

// Recv fails without cgo.
func (c *Comm) Recv(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error { return errNoCgo }

// GroupStart fails without cgo.
func GroupStart() error { return errNoCgo }

// GroupEnd fails without cgo.
func GroupEnd() error { return errNoCgo }

// AsyncError fails without cgo.
func (c *Comm) AsyncError() error { return errNoCgo }

// Abort does nothing without cgo.
func (c *Comm) Abort() error { return nil }

// Destroy does nothing without cgo.
func (c *Comm) Destroy() error { return nil }

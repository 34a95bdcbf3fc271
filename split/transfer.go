package split

import (
	"fmt"

	"github.com/infergo/infer/backend"
)

// Transfer enqueues dst = src, where dst and src may live on different devices: a plain
// copy on one device; the destination's direct path (peer copy, or a pipelined copy
// through pinned host memory) when it implements backend.Transferer; else through host
// memory, which waits for src's device. The host path is for devices of different kinds
// (a CPU stage next to a GPU stage): a Transferer that knows src's kind answers itself,
// with an error when it has no path (two CUDA devices without a peer table), rather
// than letting the copy fall back silently to the host. Shapes and types must match.
func Transfer(dst, src backend.Buffer) error {
	if dst.DType() != src.DType() || dst.Rows() != src.Rows() || dst.Cols() != src.Cols() {
		return fmt.Errorf("split: transfer %v(%d, %d) into %v(%d, %d): shapes differ",
			src.DType(), src.Rows(), src.Cols(), dst.DType(), dst.Rows(), dst.Cols())
	}
	if dst.Device() == src.Device() {
		dst.Device().Copy(dst, src)
		return nil
	}
	if t, ok := dst.Device().(backend.Transferer); ok {
		done, err := t.TransferFrom(dst, src)
		if err != nil {
			return fmt.Errorf("split: transfer %s -> %s: %w", src.Device().Name(), dst.Device().Name(), err)
		}
		if done {
			return nil
		}
	}
	host := make([]byte, src.Rows()*src.DType().RowBytes(src.Cols()))
	if err := src.Device().Download(host, src); err != nil {
		return fmt.Errorf("split: transfer from %s: %w", src.Device().Name(), err)
	}
	if err := dst.Device().Upload(dst, host); err != nil {
		return fmt.Errorf("split: transfer to %s: %w", dst.Device().Name(), err)
	}
	return nil
}

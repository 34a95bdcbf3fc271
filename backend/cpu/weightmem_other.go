//go:build !linux

package cpu

// weightMem returns n zeroed bytes for a weight copy that MatMul streams (q40Panels)
// from the Go heap; Linux maps it on huge pages (weightmem_linux.go).
func weightMem(_ *Buffer, n int) []byte { return make([]byte, n) }

// mapping is Linux's anonymous mapping of a weight copy; never made here.
type mapping struct{}

func (m *mapping) release() {}

package cpu

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on amd64 and arm64 Linux.
const hugePage = 2 << 20

// weightMem returns n zeroed bytes for a weight copy that MatMul streams at every
// token (q40Panels), owned by b: on Linux an anonymous mapping aligned to 2 MiB and
// advised MADV_HUGEPAGE, so that with transparent huge pages on "madvise" (the common
// default) it is backed by 2 MiB pages. Streaming a matrix through 4 KiB pages costs a
// TLB miss every 4 KiB and stops the hardware prefetchers at every page boundary: on
// the 2-vCPU Zen 2 VM the Q4_0 decode kernel read 7.4-9.2 GB/s per thread from 4 KiB
// pages and 10-12.5 from 2 MiB ones (both vCPUs at once). The mapping is released
// when b is collected or freed (mapping.release); where mapping fails, the memory
// comes from the Go heap.
func weightMem(b *Buffer, n int) []byte {
	if n < hugePage {
		return make([]byte, n)
	}
	mem, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	m := &mapping{mem: mem}
	off := 0
	if a := int(uintptrOf(mem) % hugePage); a != 0 {
		off = hugePage - a
	}
	data := mem[off : off+n : off+n]
	_ = syscall.Madvise(data, madvHugePage) // advice only: without it the pages are 4 KiB
	runtime.AddCleanup(b, (*mapping).release, m)
	b.mapped = m
	return data
}

// madvHugePage is MADV_HUGEPAGE.
const madvHugePage = 14

// mapping is the anonymous mapping behind a buffer's weight copy.
type mapping struct {
	mem  []byte
	done atomic.Bool
}

// release unmaps the memory, once.
func (m *mapping) release() {
	if m != nil && m.done.CompareAndSwap(false, true) {
		_ = syscall.Munmap(m.mem)
	}
}

// uintptrOf is the address of mem's first byte.
func uintptrOf(mem []byte) uintptr { return uintptr(unsafe.Pointer(&mem[0])) }

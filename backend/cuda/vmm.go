package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// vmm allocates device memory through the virtual memory management API: a physical
// allocation (cuMemCreate), a reserved address range, a mapping, and access granted to
// the owning device (and later to the one neighbour that reads it). Sizes round up to
// the granularity (2 MiB on H200).
type vmm struct {
	ok          bool // the device supports VMM
	device      int
	granularity int
}

func newVMM(d *Device) (vmm, error) {
	v := vmm{ok: d.info.VMM, device: d.ordinal}
	if !v.ok {
		return v, nil
	}
	prop := v.prop()
	var g C.size_t
	if err := check("cuMemGetAllocationGranularity", C.cu_mem_get_granularity(&g, &prop, 0 /* MINIMUM */)); err != nil {
		return v, err
	}
	v.granularity = int(g)
	return v, nil
}

// Granularity is the size VMM allocations round up to, or 0 without VMM support.
func (d *Device) Granularity() int { return d.vmm.granularity }

// prop describes pinned device memory on the owning device.
func (v vmm) prop() C.CUmemAllocationProp {
	var p C.CUmemAllocationProp
	p._type = 1 // CU_MEM_ALLOCATION_TYPE_PINNED
	p.location._type = 1
	p.location.id = C.int(v.device)
	return p
}

// mapNew creates, reserves, maps and opens a.size bytes (rounded up) for the owner.
func (v vmm) mapNew(a *allocation) error {
	if !v.ok {
		return errors.New("VMM is not supported on this device")
	}
	a.size = (a.size + v.granularity - 1) / v.granularity * v.granularity
	prop := v.prop()
	if err := check("cuMemCreate", C.cu_mem_create(&a.handle, C.size_t(a.size), &prop)); err != nil {
		return err
	}
	if err := check("cuMemAddressReserve", C.cu_mem_address_reserve(&a.ptr, C.size_t(a.size), C.size_t(v.granularity))); err != nil {
		return errors.Join(err, check("cuMemRelease", C.cu_mem_release(a.handle)))
	}
	if err := check("cuMemMap", C.cu_mem_map(a.ptr, C.size_t(a.size), a.handle)); err != nil {
		return errors.Join(err, check("cuMemAddressFree", C.cu_mem_address_free(a.ptr, C.size_t(a.size))),
			check("cuMemRelease", C.cu_mem_release(a.handle)))
	}
	a.mapped = true
	if err := grant(a, v.device); err != nil {
		return errors.Join(err, a.unmap())
	}
	return nil
}

// grant gives device read and write access to the mapping.
func grant(a *allocation, device int) error {
	var desc C.CUmemAccessDesc
	desc.location._type = 1 // CU_MEM_LOCATION_TYPE_DEVICE
	desc.location.id = C.int(device)
	desc.flags = 3 // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
	return check("cuMemSetAccess", C.cu_mem_set_access(a.ptr, C.size_t(a.size), &desc, 1))
}

// unmap undoes mapNew.
func (a *allocation) unmap() error {
	return errors.Join(
		check("cuMemUnmap", C.cu_mem_unmap(a.ptr, C.size_t(a.size))),
		check("cuMemRelease", C.cu_mem_release(a.handle)),
		check("cuMemAddressFree", C.cu_mem_address_free(a.ptr, C.size_t(a.size))),
	)
}

// Grant gives peer read and write access to b, a buffer from AllocMapped, so that
// kernels and copies on peer can use b's address directly.
func (d *Device) Grant(b *Buffer, peer *Device) error {
	if b.alloc == nil || !b.alloc.mapped {
		return fmt.Errorf("cuda: grant %s access: buffer not from AllocMapped", peer.name)
	}
	err := d.do(func() error { return grant(b.alloc, peer.ordinal) })
	if err != nil {
		return fmt.Errorf("cuda: grant %s access to a buffer of %s: %w", peer.name, d.name, err)
	}
	return nil
}

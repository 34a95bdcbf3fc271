package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Device attributes (CUdevice_attribute).
const (
	attrMultiprocessorCount = 16
	attrComputeMajor        = 75
	attrComputeMinor        = 76
	attrVMMSupported        = 102
)

// Count returns the number of CUDA devices; it fails with an error wrapping ErrNoDriver
// when the driver is absent.
func Count() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.cu_device_get_count(&n)); err != nil {
		return 0, fmt.Errorf("cuda: count devices: %w", err)
	}
	return int(n), nil
}

// Devices describes every CUDA device.
func Devices() ([]Info, error) {
	n, err := Count()
	if err != nil {
		return nil, err
	}
	infos := make([]Info, 0, n)
	for i := range n {
		info, err := deviceInfo(i)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// deviceInfo reads the attributes of device ordinal; free memory needs the primary
// context, which it retains for the duration of the call.
func deviceInfo(ordinal int) (Info, error) {
	info := Info{Ordinal: ordinal}
	var dev C.CUdevice
	if err := check("cuDeviceGet", C.cu_device_get(&dev, C.int(ordinal))); err != nil {
		return info, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	var name [256]C.char
	if err := check("cuDeviceGetName", C.cu_device_get_name(&name[0], C.int(len(name)), dev)); err != nil {
		return info, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	info.Name = C.GoString((*C.char)(unsafe.Pointer(&name[0])))
	attrs := []struct {
		id  int
		dst *int
	}{{attrComputeMajor, &info.Major}, {attrComputeMinor, &info.Minor}, {attrMultiprocessorCount, &info.SMs}}
	for _, a := range attrs {
		var v C.int
		if err := check("cuDeviceGetAttribute", C.cu_device_get_attribute(&v, C.int(a.id), dev)); err != nil {
			return info, fmt.Errorf("cuda: device %d: attribute %d: %w", ordinal, a.id, err)
		}
		*a.dst = int(v)
	}
	var vmm C.int
	if check("cuDeviceGetAttribute", C.cu_device_get_attribute(&vmm, attrVMMSupported, dev)) == nil {
		info.VMM = vmm != 0
	}
	free, total, err := memInfo(dev)
	if err != nil {
		return info, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	info.FreeMemory, info.TotalMemory = free, total
	return info, nil
}

// memInfo returns free and total memory of dev, with its primary context current.
func memInfo(dev C.CUdevice) (free, total uint64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ctx C.CUcontext
	if err := check("cuDevicePrimaryCtxRetain", C.cu_primary_ctx_retain(&ctx, dev)); err != nil {
		return 0, 0, err
	}
	defer func() {
		if rerr := check("cuDevicePrimaryCtxRelease_v2", C.cu_primary_ctx_release(dev)); rerr != nil {
			free, total, err = 0, 0, errors.Join(err, rerr)
		}
	}()
	if err := check("cuCtxSetCurrent", C.cu_ctx_set_current(ctx)); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := check("cuMemGetInfo_v2", C.cu_mem_get_info(&f, &t)); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

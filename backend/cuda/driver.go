// Package cuda runs the backend.Device contract on NVIDIA GPUs through the CUDA driver
// API. The driver (libcuda.so.1) and cuBLAS are loaded with dlopen when the first device
// is opened, so the package builds, vets and tests on machines with neither CUDA nor a
// GPU; there Open fails with an error that says "no CUDA driver".
//
// Every driver call runs with the device's primary context current on a locked OS thread
// (Device.do). Kernels come from PTX compiled ahead of time (package kernels) and take
// their parameters packed into one C buffer, so no Go pointer enters C.
package cuda

/*
#cgo LDFLAGS: -ldl
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNoDriver is returned (wrapped) by Open and Count when libcuda.so.1 cannot be loaded.
var ErrNoDriver = errors.New("no CUDA driver")

// driver is the outcome of loading libcuda once per process: the library handle lives in
// C; this records whether it loaded and cuInit succeeded. With cublasLoad, its cuBLAS
// counterpart, it is the package's only mutable state.
var driver struct {
	once sync.Once
	err  error
}

// load opens libcuda.so.1, resolves the entry points and calls cuInit, once.
func load() error {
	driver.once.Do(func() {
		var missing *C.char
		switch C.cu_load(&missing) {
		case 0:
		case 1:
			driver.err = fmt.Errorf("cuda: %w: cannot load %s", ErrNoDriver, C.GoString(missing))
			return
		default:
			driver.err = fmt.Errorf("cuda: %w: libcuda.so.1 lacks %s", ErrNoDriver, C.GoString(missing))
			return
		}
		if err := check("cuInit", C.cu_init(0)); err != nil {
			driver.err = fmt.Errorf("cuda: %w: %v", ErrNoDriver, err)
		}
	})
	return driver.err
}

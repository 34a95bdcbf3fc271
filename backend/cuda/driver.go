package cuda

/*
#cgo LDFLAGS: -ldl
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"sync"
)

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

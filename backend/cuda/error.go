package cuda

/*
#include "driver.h"
*/
import "C"

// driverErrorName is the driver's own name for r (cuGetErrorName), or "" before the
// driver is loaded.
func driverErrorName(r Result) string {
	if s := C.cu_error_name(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// check turns a driver status into nil or an *Error naming op.
func check(op string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &Error{Op: op, Code: Result(r)}
}

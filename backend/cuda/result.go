package cuda

import "fmt"

// Result is a CUresult, the status code of a driver call.
type Result int

// Results that callers test for with errors.Is.
const (
	ErrInvalidValue             Result = 1
	ErrOutOfMemory              Result = 2
	ErrNotInitialized           Result = 3
	ErrNoDevice                 Result = 100
	ErrInvalidDevice            Result = 101
	ErrPeerAccessUnsupported    Result = 217
	ErrInvalidPTX               Result = 218
	ErrNotFound                 Result = 500
	ErrNotReady                 Result = 600
	ErrIllegalAddress           Result = 700
	ErrLaunchOutOfResources     Result = 701
	ErrLaunchFailed             Result = 719
	ErrPeerAccessAlreadyEnabled Result = 704
	ErrTooManyPeers             Result = 711
	ErrNotSupported             Result = 801
	ErrStreamCaptureInvalidated Result = 901
)

// resultNames holds the cuda.h names of the common results; the driver's own
// cuGetErrorName covers the rest when it is loaded.
var resultNames = map[Result]string{
	0:                           "CUDA_SUCCESS",
	ErrInvalidValue:             "CUDA_ERROR_INVALID_VALUE",
	ErrOutOfMemory:              "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized:           "CUDA_ERROR_NOT_INITIALIZED",
	4:                           "CUDA_ERROR_DEINITIALIZED",
	34:                          "CUDA_ERROR_STUB_LIBRARY",
	35:                          "CUDA_ERROR_INSUFFICIENT_DRIVER",
	ErrNoDevice:                 "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice:            "CUDA_ERROR_INVALID_DEVICE",
	200:                         "CUDA_ERROR_INVALID_IMAGE",
	201:                         "CUDA_ERROR_INVALID_CONTEXT",
	209:                         "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrPeerAccessUnsupported:    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	ErrInvalidPTX:               "CUDA_ERROR_INVALID_PTX",
	222:                         "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	400:                         "CUDA_ERROR_INVALID_HANDLE",
	ErrNotFound:                 "CUDA_ERROR_NOT_FOUND",
	ErrNotReady:                 "CUDA_ERROR_NOT_READY",
	ErrIllegalAddress:           "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrLaunchOutOfResources:     "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702:                         "CUDA_ERROR_LAUNCH_TIMEOUT",
	ErrPeerAccessAlreadyEnabled: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705:                         "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	ErrTooManyPeers:             "CUDA_ERROR_TOO_MANY_PEERS",
	ErrLaunchFailed:             "CUDA_ERROR_LAUNCH_FAILED",
	ErrNotSupported:             "CUDA_ERROR_NOT_SUPPORTED",
	ErrStreamCaptureInvalidated: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	999:                         "CUDA_ERROR_UNKNOWN",
}

// String returns the cuda.h name of r, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	if s := driverErrorName(r); s != "" {
		return s
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// Error makes Result an error, so that errors.Is(err, cuda.ErrOutOfMemory) works.
func (r Result) Error() string { return r.String() }

// Error is a failed driver call.
type Error struct {
	Op   string // entry point, e.g. "cuMemAlloc_v2"
	Code Result
}

// Error is "cuda: <op>: <result name>".
func (e *Error) Error() string { return fmt.Sprintf("cuda: %s: %v", e.Op, e.Code) }

// Unwrap returns the Result, for errors.Is.
func (e *Error) Unwrap() error { return e.Code }

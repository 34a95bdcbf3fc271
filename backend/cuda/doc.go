// Package cuda runs the backend.Device contract on NVIDIA GPUs through the CUDA driver
// API. The driver (libcuda.so.1) and cuBLAS are loaded with dlopen when the first device
// is opened, so the package builds, vets and tests on machines with neither CUDA nor a
// GPU; there Open fails with an error that says "no CUDA driver". Built without cgo
// (CGO_ENABLED=0) the package keeps its API, and Open, Count and NewPeers fail with an
// error wrapping ErrNoDriver that says so; the rest of the engine runs on the CPU.
//
// Every driver call runs with the device's primary context current on a locked OS thread
// (Device.do). Kernels come from PTX compiled ahead of time (package kernels) and take
// their parameters packed into one C buffer, so no Go pointer enters C.
package cuda

import "errors"

// ErrNoDriver is returned (wrapped) by Open and Count when libcuda.so.1 cannot be
// loaded, or when the package was built without cgo.
var ErrNoDriver = errors.New("no CUDA driver")

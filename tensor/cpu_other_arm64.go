//go:build !linux && !darwin

package tensor

// cpuHasDotProd: without a way to ask here, the kernels keep to plain NEON.
func cpuHasDotProd() bool { return false }

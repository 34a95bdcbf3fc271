package tensor

// cpuHasDotProd: every Apple arm64 CPU (M1 on) has the dot-product instructions.
func cpuHasDotProd() bool { return true }

package cuda

// Info describes one GPU.
type Info struct {
	Ordinal      int
	Name         string // e.g. "NVIDIA H200"
	TotalMemory  uint64 // bytes
	FreeMemory   uint64 // bytes free when Info was read
	Major, Minor int    // compute capability
	SMs          int    // multiprocessors
	VMM          bool   // virtual memory management (cuMemCreate, cuMemMap) supported
}

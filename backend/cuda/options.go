package cuda

// Options configure a Device opened with OpenWith; the zero value is Open's device.
type Options struct {
	// WeightCacheBytes bounds the weight cache: widened copies of weight matrices (F16
	// for quantized weights, F32 for BF16 ones) that batched MatMuls (the cuBLAS path)
	// keep instead of widening the weights into scratch on every call. 0 disables it.
	// The cache also leaves at least 1 GiB + 5% of the device's memory free; a weight
	// whose copy does not fit is widened into scratch on each call, as without a cache.
	WeightCacheBytes int64
	// KernelDir, if not empty, is a directory of kernel PTX (<module>.ptx, with
	// fatbin/<module>.fatbin where one was built from that PTX: what `make kernels` writes
	// into backend/cuda/kernels) loaded instead of the embedded kernels: for trying kernels
	// built on a GPU machine in a binary built before them.
	KernelDir string
	// MMQ multiplies prompt batches (16 rows or more) of quantized weights with the MMQ
	// kernels (kernels/mmq.cu: int8 tensor-core GEMM reading the quantized blocks, no F16
	// copy of the weights) instead of dequantization + cuBLAS. Off by default: on an H200
	// they are still 2.5-4x slower than that path. Their module is loaded only when on.
	MMQ bool
	// NoWGMMA turns off the wgmma kernels (kernels/wgmma.cu: Hopper's warpgroup MMA, the
	// Q4_0 and Q8_0 blocks decoded in registers, no F16 copy of the weights), which
	// multiply the prompt batches they are faster on (a grid of about one wave) on GPUs
	// of compute capability 9.0; dequantization + cuBLAS then takes every batch. The
	// environment variable INFER_CUDA_WGMMA=0 turns them off as well.
	NoWGMMA bool
}

// WeightCacheStats describe a device's weight cache.
type WeightCacheStats struct {
	Limit   int64 // Options.WeightCacheBytes; 0: no cache
	Bytes   int64 // device memory held by the copies
	Copies  int   // weight matrices cached
	Skipped int   // weight matrices whose copy did not fit (retried after a Free)
	Peak    int64 // the most Bytes held since the device opened
}

// wcacheHeadroom is the device memory the weight cache leaves free: 1 GiB + 5% of total.
func wcacheHeadroom(total uint64) uint64 { return 1<<30 + total/20 }

// wcacheFits reports whether a copy of size bytes may join a cache holding used bytes
// under limit, with free of total device bytes free now: the cache stays within limit
// and at least wcacheHeadroom(total) stays free.
func wcacheFits(size, used, limit int64, free, total uint64) bool {
	if size <= 0 || limit <= 0 || used+size > limit || used+size < used {
		return false
	}
	return free >= uint64(size) && free-uint64(size) >= wcacheHeadroom(total)
}

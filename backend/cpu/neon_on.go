//go:build arm64 && !infer_portable

package cpu

// useNEON selects the NEON kernels of neon_arm64.s: Advanced SIMD is part of every
// arm64 CPU Go runs on; the infer_portable build tag turns them off.
const useNEON = true

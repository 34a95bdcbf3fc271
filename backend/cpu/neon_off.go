//go:build !arm64 || infer_portable

package cpu

// useNEON is false off arm64 and at the portable level (build tag infer_portable).
const useNEON = false

//go:build !arm64

package cpu

// The NEON attention rows exist on arm64 only: elsewhere they never run.

func accRowF16NEON(acc []float32, v []uint16, p float32) bool              { return false }
func madRowF16NEON(acc, v []uint16, s float32) bool                        { return false }
func scaleRowF16NEON(acc []uint16, s float32) bool                         { return false }
func chunkScoresNEON(s []float32, k []uint16, qf []float32, h kvHead) bool { return false }

func tileScoresNEON(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) bool { return false }

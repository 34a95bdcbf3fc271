//go:build !race

package cpu

// raceEnabled reports a test binary built with the race detector, whose
// instrumentation allocates where the kernels do not (allocation tests skip).
const raceEnabled = false

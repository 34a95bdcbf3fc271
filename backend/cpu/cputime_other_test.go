//go:build !unix

package cpu

import "time"

// processTime is 0 where the process's CPU time is not read.
func processTime() time.Duration { return 0 }

package gguf

import (
	"strconv"
	"strings"
)

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// dimsString formats dims as [4096 32000].
func dimsString(dims []uint64) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = itoa(d)
	}
	return "[" + strings.Join(s, " ") + "]"
}

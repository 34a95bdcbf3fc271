package cpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// MemInfo returns the host memory available to new allocations and the total, in
// bytes, as HostMemory does: every CPU device shares the host's memory.
func (d *Device) MemInfo() (free, total uint64, err error) { return HostMemory() }

// HostMemory returns the memory the host has available for new allocations and its
// total, in bytes: MemAvailable and MemTotal of /proc/meminfo (free memory plus the
// page cache and other memory the kernel can reclaim without swapping), or on kernels
// before 3.14, which lack MemAvailable, MemFree + Buffers + Cached. Where there is no
// /proc/meminfo (not Linux) the error wraps errors.ErrUnsupported: the amount is
// unknown and a planner should not bound the host's memory.
func HostMemory() (free, total uint64, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, fmt.Errorf("cpu: host memory: no /proc/meminfo: %w", errors.ErrUnsupported)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("cpu: host memory: %w", err)
	}
	return parseMemInfo(b)
}

// parseMemInfo reads the fields HostMemory needs from the text of /proc/meminfo, lines
// like "MemAvailable:   24081004 kB".
func parseMemInfo(b []byte) (free, total uint64, err error) {
	kb := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && string(f[1]) != "kB" {
			continue
		}
		if v, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil && v <= 1<<53 {
			kb[string(key)] = v
		}
	}
	t, ok := kb["MemTotal"]
	if !ok {
		return 0, 0, errors.New("cpu: host memory: /proc/meminfo has no MemTotal")
	}
	a, ok := kb["MemAvailable"]
	if !ok {
		a = kb["MemFree"] + kb["Buffers"] + kb["Cached"]
	}
	return min(a, t) << 10, t << 10, nil
}

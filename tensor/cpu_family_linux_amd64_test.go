package tensor

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCPUIsZen4 checks cpuIsAMD's and cpuIsZen4's reading of CPUID against the kernel's
// in /proc/cpuinfo (vendor_id and cpu family), and that q40PrefetchNTA and hasWideVNNI
// follow them.
func TestCPUIsZen4(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	field := func(name string) string {
		for _, line := range strings.Split(string(raw), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == name {
				return strings.TrimSpace(v)
			}
		}
		t.Fatalf("/proc/cpuinfo has no %q", name)
		return ""
	}
	family, err := strconv.Atoi(field("cpu family"))
	if err != nil {
		t.Fatal(err)
	}
	amd := field("vendor_id") == "AuthenticAMD"
	if got := cpuIsAMD(); got != amd {
		t.Errorf("cpuIsAMD %v, /proc/cpuinfo says vendor %s", got, field("vendor_id"))
	}
	if q40PrefetchNTA != amd {
		t.Errorf("q40PrefetchNTA %v on vendor %s: want PREFETCHNTA on AMD only", q40PrefetchNTA, field("vendor_id"))
	}
	want := amd && family == 0x19
	if got := cpuIsZen4(); got != want {
		t.Errorf("cpuIsZen4 %v, /proc/cpuinfo says vendor %s family %d", got, field("vendor_id"), family)
	}
	if hasWideVNNI && (want || !hasVNNI) {
		t.Errorf("hasWideVNNI set on a Zen 4 or without VNNI (hasVNNI %v)", hasVNNI)
	}
	t.Logf("vendor %s, family %#x: cpuIsZen4 %v, hasVNNI %v, hasWideVNNI %v", field("vendor_id"), family, want, hasVNNI, hasWideVNNI)
}

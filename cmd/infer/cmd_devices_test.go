package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend/cuda"
)

// examplePairs is a two-GPU table: 0 -> 1 peer, 1 -> 0 staged after a failed verify.
func examplePairs() []pairRow {
	ms := func(bytes int, d time.Duration) cuda.Timing { return cuda.Timing{Bytes: bytes, Time: d} }
	return []pairRow{
		{From: 0, To: 1, Pair: cuda.Pair{From: 0, To: 1, State: cuda.PeerEnabled, Info: cuda.PeerInfo{CanAccess: true, NativeAtomics: true}},
			HasPeer: true, Peer: [2]cuda.Timing{ms(16<<10, 8600*time.Nanosecond), ms(64<<20, 180*time.Microsecond)},
			HasStaged: true, Staged: [2]cuda.Timing{ms(16<<10, 17*time.Microsecond),
				{Bytes: 64 << 20, Time: 1360 * time.Microsecond, D2H: 1220 * time.Microsecond, H2D: 1226 * time.Microsecond}}},
		{From: 1, To: 0, Pair: cuda.Pair{From: 1, To: 0, State: cuda.PeerStaged, Info: cuda.PeerInfo{CanAccess: true}, Reason: "verification copy failed"},
			HasStaged: true, Staged: [2]cuda.Timing{ms(16<<10, 17*time.Microsecond), ms(64<<20, 1360*time.Microsecond)}},
	}
}

func TestWriteTopology(t *testing.T) {
	var b bytes.Buffer
	if err := writeTopology(&b, []string{"cuda:0", "cuda:1"}, examplePairs()); err != nil {
		t.Fatal(err)
	}
	want := "from\\to  cuda:0  cuda:1\ncuda:0   X       peer\ncuda:1   staged  X\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("topology:\n%s\nwant it to start with:\n%s", b.String(), want)
	}
}

func TestWritePairTable(t *testing.T) {
	var b bytes.Buffer
	if err := writePairTable(&b, examplePairs(), true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, want := range []string{"0 -> 1", "peer", "8.6 us", "372.8 GB/s", "17.0 us", "49.3 GB/s", "0.56x"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("line %q lacks %q", lines[1], want)
		}
	}
	for _, want := range []string{"1 -> 0", "staged", "verification copy failed"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("line %q lacks %q", lines[2], want)
		}
	}
	if f := strings.Fields(lines[2]); f[6] != "-" {
		t.Errorf("a staged pair shows a peer time: %q", lines[2])
	}
	b.Reset()
	if err := writePairTable(&b, examplePairs(), false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "GB/s") || !strings.Contains(b.String(), "atomics") {
		t.Errorf("unmeasured table:\n%s", b.String())
	}
}

func TestDevicesErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"devices", "-peer", "sometimes"}, &stdout, &stderr)
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("devices -peer sometimes: %v, want a usage error", err)
	}
	if _, derr := cuda.Count(); derr == nil {
		t.Skip("a CUDA driver is present")
	}
	err = run(context.Background(), []string{"devices"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no CUDA driver") {
		t.Errorf("devices without a driver: %v", err)
	}
}

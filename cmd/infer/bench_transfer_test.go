package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend/cuda"
)

// fakeMeter answers Measure with a staged-looking timing at 40 GB/s.
type fakeMeter struct{ calls [][3]int }

func (f *fakeMeter) Measure(from, to, size, reps int) (cuda.Timing, error) {
	f.calls = append(f.calls, [3]int{from, to, size})
	d := time.Duration(float64(size) / 40e9 * 1e9)
	return cuda.Timing{Bytes: size, Path: cuda.PeerStaged, Time: d, D2H: d * 9 / 10, H2D: d * 9 / 10}, nil
}

func TestBenchPair(t *testing.T) {
	var b bytes.Buffer
	m := &fakeMeter{}
	if err := benchPair(context.Background(), &b, m, 0, 1, "cuda:0", "cuda:1", []int{4 << 10, 64 << 20}, 0); err != nil {
		t.Fatal(err)
	}
	want := "| cuda:0 | cuda:1 | staged | 64 MiB | 1677.7 | 40.00 | 1509.9 | 1509.9 | 0.56 |"
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || lines[1] != want || !strings.Contains(lines[0], "| 4 KiB |") {
		t.Errorf("rows:\n%s\nwant the second:\n%s", b.String(), want)
	}
	if !slices.Equal(m.calls, [][3]int{{0, 1, 4 << 10}, {0, 1, 64 << 20}}) {
		t.Errorf("calls %v", m.calls)
	}
}

func TestWriteTransferRowPeer(t *testing.T) {
	var b bytes.Buffer
	r := transferRow{From: "cuda:0", To: "cuda:1", Timing: cuda.Timing{Bytes: 256 << 20, Path: cuda.PeerEnabled, Time: 687 * time.Microsecond}}
	if err := writeTransferRow(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "| cuda:0 | cuda:1 | peer | 256 MiB | 687.0 | 390.74 | - | - | - |\n"; b.String() != want {
		t.Errorf("row %q, want %q", b.String(), want)
	}
}

func TestSizes(t *testing.T) {
	var got []int
	if err := sizeList(&got)("4K, 64m,1G,1000"); err != nil || !slices.Equal(got, []int{4 << 10, 64 << 20, 1 << 30, 1000}) {
		t.Errorf("sizeList = %v, %v", got, err)
	}
	if err := sizeList(&got)("4X"); err == nil {
		t.Error("sizeList(4X) succeeded")
	}
	for n, want := range map[int]string{4 << 10: "4 KiB", 256 << 20: "256 MiB", 1000: "1000 B", 3 << 30: "3 GiB"} {
		if s := sizeName(n); s != want {
			t.Errorf("sizeName(%d) = %q, want %q", n, s, want)
		}
	}
	if p := orderedPairs(3); len(p) != 6 || p[0] != [2]int{0, 1} || p[5] != [2]int{2, 1} {
		t.Errorf("orderedPairs(3) = %v", p)
	}
}

func TestBenchTransferErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"bench", "transfer", "-peer", "maybe"}, &stdout, &stderr)
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("bench transfer -peer maybe: %v, want a usage error", err)
	}
	err = run(context.Background(), []string{"bench", "transfer", "-sizes", "x"}, &stdout, &stderr)
	if !errors.As(err, &ue) {
		t.Errorf("bench transfer -sizes x: %v, want a usage error", err)
	}
}

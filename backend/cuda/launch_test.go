//go:build cgo

package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/infergo/infer/backend/cuda/kernels"
)

// TestKernelEntriesExist checks that every kernel the Go code launches is defined in
// the committed PTX (compute_80: the PDL markers exist only in sm_90 code).
func TestKernelEntriesExist(t *testing.T) {
	for _, k := range kernelTable() {
		if slices.Contains(pdlMarkers, k) {
			if src, err := kernels.PTX(k.module); err == nil && bytes.Contains(src, []byte(".entry "+k.entry+"(")) {
				t.Errorf("kernel %s: in the compute_80 %s.ptx, which has no PDL code", k.entry, k.module)
			}
			continue
		}
		src, err := kernels.PTX(k.module)
		if err != nil || !bytes.Contains(src, []byte(".entry "+k.entry+"(")) {
			t.Errorf("kernel %s: no entry in %s.ptx (%v)", k.entry, k.module, err)
		}
	}
}

// TestArgsPacking checks the C layout of packed parameters: each at a multiple of its size.
func TestArgsPacking(t *testing.T) {
	a := new(args).i32(7).ptr(0x1122334455667788).f32(1.5).i32(-2).u64(9)
	b := a.bytes()
	if len(b) != 32 {
		t.Fatalf("packed %d bytes, want 32", len(b))
	}
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != 7 || le.Uint64(b[8:]) != 0x1122334455667788 ||
		math.Float32frombits(le.Uint32(b[16:])) != 1.5 || int32(le.Uint32(b[20:])) != -2 || le.Uint64(b[24:]) != 9 {
		t.Fatalf("packed % x", b)
	}
}

func TestArgsOverflowPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an int parameter past int32")
		}
	}()
	new(args).i32(1 << 40)
}

//go:build cgo

package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/infergo/infer/backend/cuda/kernels"
	"github.com/infergo/infer/tensor"
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

// TestKernelNames checks the fixed kernel-name tables against the names formatted from
// the types, and that each is a kernel the device loads.
func TestKernelNames(t *testing.T) {
	loaded := map[string]bool{}
	for _, k := range kernelTable() {
		loaded[k.entry] = true
	}
	check := func(got, want string) {
		t.Helper()
		if got != want || !loaded[got] {
			t.Errorf("kernel name %q, want %q (in kernelTable: %v)", got, want, loaded[got])
		}
	}
	for _, dt := range weightTypes {
		tn := typeName(dt)
		check(kernelsOf(dt).embed, "embed_"+tn)
		check(fusedEntry(dt), "mv_fused_"+tn)
		check(fusedBiasEntry(dt), "mv_fusedb_"+tn)
		for _, nc := range matVecWidths {
			check(mvEntry(dt, nc), fmt.Sprintf("mv_%s_%d", tn, nc))
		}
		check(dequant8Kernel(dt), "dequant8_f16_"+tn)
		if quantized(dt) {
			for _, bn := range mmqTiles(dt) {
				check(mmqName(dt, bn), fmt.Sprintf("mmq_%s_%d", tn, bn))
			}
		}
	}
	for _, dt := range wgTypes {
		for _, s := range wgStageCounts(dt) {
			check(wgName(dt, s), fmt.Sprintf("wg_%s_s%d", typeName(dt), s))
		}
	}
	for _, hd := range []int{64, 128, 256} {
		for _, g := range []int{1, 2, 4} {
			entry, got, ok := gqaEntry(tensor.F16, hd, 4, g)
			if !ok || got != g {
				t.Errorf("gqaEntry(F16, hd %d, group 4, most %d) = %q, %d, %v", hd, g, entry, got, ok)
			}
			check(entry, fmt.Sprintf("attention_gqa_f16_hd%d_g%d", hd, g))
		}
	}
	for _, c := range [][2]tensor.DType{{tensor.F32, tensor.F32}, {tensor.F32, tensor.F16}, {tensor.F16, tensor.F32}, {tensor.F16, tensor.F16}, {tensor.BF16, tensor.F32}} {
		check(copyEntry(c[0], c[1]), "copy_"+typeName(c[0])+"_"+typeName(c[1]))
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
		check(setRowsEntry(dt, false), "set_rows_"+typeName(dt))
		check(setRowsEntry(dt, true), "set_rows2_"+typeName(dt))
	}
}

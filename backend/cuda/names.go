//go:build cgo

package cuda

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

// Kernel names by type, fixed or formatted once, so that the calls of a decode step
// (eager ones too) format no string to find their kernel.

// mvEntry is the mat-vec kernel of weight type dt for nc activation rows (one of
// matVecWidths).
func mvEntry(dt tensor.DType, nc int) string {
	k := kernelsOf(dt)
	for i, c := range matVecWidths {
		if c == nc {
			return k.mv[i]
		}
	}
	return fmt.Sprintf("mv_%s_%d", typeName(dt), nc)
}

// mmqName is the MMQ kernel of weights dt with token tile bn (one of mmqTileSizes):
// "mmq_q4_0_64".
func mmqName(dt tensor.DType, bn int) string {
	k := kernelsOf(dt)
	for i, b := range mmqTileSizes {
		if b == bn {
			return k.mmq[i]
		}
	}
	return fmt.Sprintf("mmq_%s_%d", typeName(dt), bn)
}

// wgName is the wgmma kernel of weights dt with a pipeline of stages stages (one of
// wgStageSizes; wgStageCounts says which of them a weight type has): "wg_q4_0_s4".
func wgName(dt tensor.DType, stages int) string {
	k := kernelsOf(dt)
	for i, s := range wgStageSizes {
		if s == stages {
			return k.wg[i]
		}
	}
	return fmt.Sprintf("wg_%s_s%d", typeName(dt), stages)
}

// typeKernels are the names of the kernels specialised for one weight type: embed_<type>,
// mv_<type>_<nc> by the index of nc in matVecWidths, mv_fused_<type>, mv_fusedb_<type>,
// mmq_<type>_<bn> by the index of bn in mmqTiles, wg_<type>_s<stages> by the index of
// stages in wgStageSizes, dequant_f16_<type> and dequant8_f16_<type>.
type typeKernels struct {
	embed     string
	mv        []string
	fused     string
	fusedBias string
	mmq       []string
	wg        []string
	dequant   string
	dequant8  string
}

// mmqTileSizes are the token tiles (bn) an MMQ kernel name is formatted for (mmqTiles
// says which of them a weight type has).
var mmqTileSizes = [...]int{32, 64, 128}

// typeKernelNames holds the kernel names of every weight type, formatted once (read only
// afterwards), so that a decode step's calls format no string.
var typeKernelNames = func() map[tensor.DType]typeKernels {
	m := make(map[tensor.DType]typeKernels, len(weightTypes))
	for _, dt := range weightTypes {
		m[dt] = newTypeKernels(dt)
	}
	return m
}()

// newTypeKernels formats the kernel names of weight type dt.
func newTypeKernels(dt tensor.DType) typeKernels {
	t := typeName(dt)
	k := typeKernels{embed: "embed_" + t, fused: "mv_fused_" + t, fusedBias: "mv_fusedb_" + t, dequant: "dequant_f16_" + t,
		dequant8: "dequant8_f16_" + t}
	for _, nc := range matVecWidths {
		k.mv = append(k.mv, fmt.Sprintf("mv_%s_%d", t, nc))
	}
	for _, bn := range mmqTileSizes {
		k.mmq = append(k.mmq, fmt.Sprintf("mmq_%s_%d", t, bn))
	}
	for _, s := range wgStageSizes {
		k.wg = append(k.wg, fmt.Sprintf("wg_%s_s%d", t, s))
	}
	return k
}

// kernelsOf returns the kernel names of weight type dt (formatted now for a type outside
// weightTypes, which has no kernels: the launch then reports the name as not loaded).
func kernelsOf(dt tensor.DType) typeKernels {
	if k, ok := typeKernelNames[dt]; ok {
		return k
	}
	return newTypeKernels(dt)
}

// copyEntry is the Copy kernel from src to dst type: copy_<src>_<dst>.
func copyEntry(src, dst tensor.DType) string {
	switch {
	case src == tensor.F32 && dst == tensor.F32:
		return "copy_f32_f32"
	case src == tensor.F32 && dst == tensor.F16:
		return "copy_f32_f16"
	case src == tensor.F16 && dst == tensor.F32:
		return "copy_f16_f32"
	case src == tensor.F16 && dst == tensor.F16:
		return "copy_f16_f16"
	case src == tensor.BF16 && dst == tensor.F32:
		return "copy_bf16_f32"
	}
	return "copy_" + typeName(src) + "_" + typeName(dst)
}

// setRowsEntry is the SetRows kernel for a cache of dt (F32 or F16, as SetRows checks):
// set_rows_<dt>, or set_rows2_<dt> for two matrices at once. Fixed names: no string is
// formatted a call.
func setRowsEntry(dt tensor.DType, two bool) string {
	switch {
	case dt == tensor.F16 && two:
		return "set_rows2_f16"
	case dt == tensor.F16:
		return "set_rows_f16"
	case two:
		return "set_rows2_f32"
	}
	return "set_rows_f32"
}

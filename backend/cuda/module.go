package cuda

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/infergo/infer/backend/cuda/kernels"
	"github.com/infergo/infer/tensor"
)

// ptxSource returns the PTX text of a kernel module (a .cu file's base name).
type ptxSource func(module string) ([]byte, error)

// embeddedPTX is the PTX committed under kernels/ and embedded in the binary.
func embeddedPTX(module string) ([]byte, error) { return kernels.PTX(module) }

// weightTypes are the weight formats with embed, dequant and mat-vec kernels.
var weightTypes = []tensor.DType{
	tensor.F32, tensor.F16, tensor.BF16, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1,
	tensor.Q8_0, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
}

// matVecWidths are the activation rows one mat-vec launch handles (the NC of matvec.cu).
var matVecWidths = []int{1, 2, 4, 8}

// typeName is the suffix of a kernel specialised for dt: "f32", "q4_k".
func typeName(dt tensor.DType) string { return strings.ToLower(dt.String()) }

// kernel names one entry point and the module (.cu file) that defines it. An optional
// kernel (a fused variant) may be missing from older PTX: the device then does without.
type kernel struct {
	module, entry string
	optional      bool
}

// kernelTable lists every kernel the Go code launches.
func kernelTable() []kernel {
	ks := []kernel{
		{"norm", "rms_norm_f32", false}, {"norm", "rms_norm_q8", true},
		{"matvec", "quantize_q8", false},
		{"rope", "rope_f32", false}, {"rope", "rope2_f32", true},
		{"setrows", "set_rows_f32", false}, {"setrows", "set_rows_f16", false},
		{"setrows", "set_rows2_f32", true}, {"setrows", "set_rows2_f16", true},
		{"attention", "attention_f32", false}, {"attention", "attention_f16", false},
		{"attention", "attention_combine", false},
		{"elementwise", "swiglu_f32", false}, {"elementwise", "swiglu_q8", true}, {"elementwise", "add_f32", false},
		{"elementwise", "add_row_f32", true},
		{"elementwise", "copy_f32_f32", false}, {"elementwise", "copy_f32_f16", false}, {"elementwise", "copy_bf16_f32", false},
		{"elementwise", "copy_f16_f32", false}, {"elementwise", "copy_f16_f16", false},
	}
	for _, dt := range weightTypes {
		t := typeName(dt)
		ks = append(ks, kernel{"embed", "embed_" + t, false}, kernel{"embed", "dequant_f16_" + t, false})
		for _, nc := range matVecWidths {
			ks = append(ks, kernel{"matvec", fmt.Sprintf("mv_%s_%d", t, nc), false})
		}
		ks = append(ks, kernel{"matvec", fusedEntry(dt), true})
	}
	return ks
}

// loadKernels loads each module once and resolves every entry of kernelTable; it runs
// under do.
func (d *Device) loadKernels(ptx ptxSource) error {
	d.funcs = map[string]C.CUfunction{}
	mods := map[string]C.CUmodule{}
	for _, k := range kernelTable() {
		m, ok := mods[k.module]
		if !ok {
			var err error
			if m, err = loadModule(ptx, k.module); err != nil {
				return err
			}
			mods[k.module] = m
			d.modules = append(d.modules, m)
		}
		name := C.CString(k.entry)
		var f C.CUfunction
		err := check("cuModuleGetFunction", C.cu_module_get_function(&f, m, name))
		C.free(unsafe.Pointer(name))
		if err != nil && k.optional {
			continue
		}
		if err != nil {
			return fmt.Errorf("kernel %s in %s.ptx: %w", k.entry, k.module, err)
		}
		d.funcs[k.entry] = f
	}
	return nil
}

// loadModule JIT-compiles one PTX module for the current context.
func loadModule(ptx ptxSource, module string) (C.CUmodule, error) {
	src, err := ptx(module)
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", module, err)
	}
	image := C.CString(string(src)) // NUL-terminated, in C memory
	defer C.free(unsafe.Pointer(image))
	var m C.CUmodule
	if err := check("cuModuleLoadData", C.cu_module_load_data(&m, unsafe.Pointer(image))); err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", module, err)
	}
	return m, nil
}

// has reports whether kernel entry was loaded (optional kernels may be missing).
func (d *Device) has(entry string) bool {
	_, ok := d.funcs[entry]
	return ok
}

// unloadKernels releases the modules; it runs under do.
func (d *Device) unloadKernels() error {
	var first error
	for _, m := range d.modules {
		if err := check("cuModuleUnload", C.cu_module_unload(m)); err != nil && first == nil {
			first = err
		}
	}
	d.modules, d.funcs = nil, nil
	return first
}

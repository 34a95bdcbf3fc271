package cuda

/*
#include <stdlib.h>
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/infergo/infer/backend/cuda/kernels"
	"github.com/infergo/infer/tensor"
)

// ptxSource returns the PTX text of a kernel module (a .cu file's base name) and the
// fatbin built from that PTX, nil when there is none. A module is loaded from its fatbin
// when there is one (machine code, no JIT compilation), else from the PTX itself.
type ptxSource func(module string) (ptx, fatbin []byte, err error)

// embeddedPTX is the PTX committed under kernels/ and embedded in the binary, with the
// embedded fatbin built from it.
func embeddedPTX(module string) ([]byte, []byte, error) {
	ptx, err := kernels.PTX(module)
	if err != nil {
		return nil, nil, err
	}
	return ptx, fatbinFor(module, ptx), nil
}

// dirPTX reads each module's PTX from dir/<module>.ptx, with dir/fatbin/<module>.fatbin
// when its .sha256 records that PTX (the layout `make kernels` writes): kernels built on a
// GPU machine, tried in a binary built before them (OpenPTXDir, Options.KernelDir).
func dirPTX(dir string) ptxSource {
	fatbins := os.DirFS(filepath.Join(dir, "fatbin"))
	return func(module string) ([]byte, []byte, error) {
		ptx, err := os.ReadFile(filepath.Join(dir, module+".ptx"))
		if err != nil {
			return nil, nil, fmt.Errorf("kernel directory: %w", err)
		}
		fb, err := kernels.FatbinIn(fatbins, module, ptx)
		if err != nil {
			fb = nil // none built from this PTX: the PTX is JIT-compiled
		}
		return ptx, fb, nil
	}
}

// fatbinFor returns the embedded fatbin of module when it was built from ptx, else nil:
// a fatbin left stale by a change to the PTX is never used.
func fatbinFor(module string, ptx []byte) []byte {
	b, err := kernels.Fatbin(module, ptx)
	if err != nil {
		return nil
	}
	return b
}

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
		{"rope", "rope_f32", false}, {"rope", "rope2_f32", true}, {"rope", "norm_rope2_f32", true},
		{"rope", "rope_rows_f32", true}, {"rope", "rope2_rows_f32", true},
		{"setrows", "set_rows_f32", false}, {"setrows", "set_rows_f16", false},
		{"setrows", "set_rows2_f32", true}, {"setrows", "set_rows2_f16", true},
		{"attention", "attention_f32", false}, {"attention", "attention_f16", false},
		{"attention", "attention_f16_hd64", false}, {"attention", "attention_f16_hd128", false},
		{"attention", "attention_f16_hd256", false}, {"attention", "attention_f32_hd64", false},
		{"attention", "attention_f32_hd128", false},
		{"attention", "flash_attn_f16_hd64", false}, {"attention", "flash_attn_f16_hd80", false},
		{"attention", "flash_attn_f16_hd96", false}, {"attention", "flash_attn_f16_hd128", false},
		{"elementwise", "swiglu_f32", false}, {"elementwise", "swiglu_q8", true}, {"elementwise", "add_f32", false},
		{"elementwise", "add_row_f32", true}, {"elementwise", "swiglu_h16", true}, {"elementwise", "copy4_f32_f16", true},
		{"elementwise", "copy_f32_f32", false}, {"elementwise", "copy_f32_f16", false}, {"elementwise", "copy_bf16_f32", false},
		{"elementwise", "copy_f16_f32", false}, {"elementwise", "copy_f16_f16", false},
	}
	for _, row := range gqaEntries {
		for _, e := range row {
			ks = append(ks, kernel{"attention", e, true})
		}
	}
	for _, dt := range weightTypes {
		t := typeName(dt)
		ks = append(ks, kernel{"embed", "embed_" + t, false}, kernel{"embed", "dequant_f16_" + t, false},
			kernel{"embed", "dequant8_f16_" + t, true})
		for _, nc := range matVecWidths {
			ks = append(ks, kernel{"matvec", mvEntry(dt, nc), false})
		}
		ks = append(ks, kernel{"matvec", fusedEntry(dt), true}, kernel{"matvec", fusedBiasEntry(dt), true})
		if quantized(dt) {
			for _, bn := range mmqTiles(dt) {
				ks = append(ks, kernel{mmqModule, mmqName(dt, bn), true})
			}
		}
	}
	for _, dt := range wgTypes {
		for _, s := range wgStageCounts(dt) {
			ks = append(ks, kernel{wgModule, wgName(dt, s), true})
		}
	}
	return append(ks, pdlMarkers...)
}

// loadKernels loads each module once and resolves every entry of kernelTable; it runs
// under do. A module with no PTX at all is skipped while its kernels are optional (a
// kernel directory built before the module existed).
func (d *Device) loadKernels(ptx ptxSource) error {
	d.funcs = map[string]C.CUfunction{}
	mods := map[string]C.CUmodule{}
	for _, k := range kernelTable() {
		if !d.wantsModule(k.module) { // not even JIT-compiled
			continue
		}
		m, ok := mods[k.module]
		if !ok {
			var err error
			m, _, err = loadModule(ptx, k.module)
			if err != nil && k.optional && errors.Is(err, fs.ErrNotExist) {
				mods[k.module] = nil
				continue
			}
			if err != nil {
				return err
			}
			mods[k.module] = m
			d.modules = append(d.modules, m)
		}
		if m == nil { // its module has no PTX
			if !k.optional {
				return fmt.Errorf("kernel %s: no PTX for module %s", k.entry, k.module)
			}
			continue
		}
		name := C.CString(k.entry)
		var f C.CUfunction
		err := check("cuModuleGetFunction", C.cu_module_get_function(&f, m, name))
		C.free(unsafe.Pointer(name))
		if err != nil && k.optional {
			continue
		}
		if err != nil {
			return fmt.Errorf("kernel %s in module %s: %w", k.entry, k.module, err)
		}
		d.funcs[k.entry] = f
	}
	d.prepareMMQ()
	d.prepareWG()
	d.prepareFlash()
	return nil
}

// wantsModule reports whether loadKernels loads module: every one but those of kernels
// that are off (mmq without Options.MMQ, wgmma where wgOn is not set).
func (d *Device) wantsModule(module string) bool {
	switch module {
	case mmqModule:
		return d.mmqOn
	case wgModule:
		return d.wgOn
	}
	return true
}

// loadModule loads one kernel module into the current context and reports whether it
// came from a fatbin: the fatbin built from its PTX, whose machine code for this GPU
// the driver loads as it is (for a GPU it has none for, the driver JIT-compiles the PTX
// inside it), else, or when the driver refuses the fatbin, the PTX, JIT-compiled.
func loadModule(ptx ptxSource, module string) (C.CUmodule, bool, error) {
	src, fb, err := ptx(module)
	if err != nil {
		return nil, false, fmt.Errorf("kernel module %s: %w", module, err)
	}
	var fatbinErr error
	if fb != nil {
		m, err := loadImage(fb)
		if err == nil {
			return m, true, nil
		}
		fatbinErr = fmt.Errorf("fatbin: %w", err)
	}
	m, err := loadImage(append(src[:len(src):len(src)], 0)) // PTX text, NUL-terminated
	if err != nil {
		return nil, false, fmt.Errorf("kernel module %s: %w", module, errors.Join(err, fatbinErr))
	}
	return m, false, nil
}

// loadImage loads a module image (fatbin, cubin or NUL-terminated PTX) from a copy in C
// memory.
func loadImage(image []byte) (C.CUmodule, error) {
	p := C.CBytes(image)
	defer C.free(p)
	var m C.CUmodule
	if err := check("cuModuleLoadData", C.cu_module_load_data(&m, p)); err != nil {
		return nil, err
	}
	return m, nil
}

// unloadModule releases a module loaded by loadModule; it runs under do.
func unloadModule(m C.CUmodule) error { return check("cuModuleUnload", C.cu_module_unload(m)) }

// has reports whether kernel entry was loaded (optional kernels may be missing).
func (d *Device) has(entry string) bool {
	_, ok := d.funcs[entry]
	return ok
}

// unloadKernels releases the modules; it runs under do.
func (d *Device) unloadKernels() error {
	var first error
	for _, m := range d.modules {
		if err := unloadModule(m); err != nil && first == nil {
			first = err
		}
	}
	d.modules, d.funcs = nil, nil
	return first
}

// Package kernels holds the CUDA kernels of package cuda: CUDA C sources (one .cu file
// per op family, common.cuh, dequant.cuh, types.cuh), the PTX generated from them by
// `make kernels` (nvcc -arch=compute_80 -ptx), and in fatbin/ a fatbin per module
// compiled from the same source the same way: machine code (SASS) for sm_80, sm_86,
// sm_89 and sm_90, so that loading on those GPUs needs no JIT compilation, and the
// compute_80 PTX for newer GPUs. The sm_90 code of the modules with programmatic
// dependent launch (pdl.cuh: matvec, norm) comes from the compute_90 front end. Each
// fatbin has beside it the sha256 of the PTX built with it (<module>.fatbin.sha256, in
// sha256sum's format), so that a fatbin left stale by a change to the PTX is never
// used. All are committed so that building needs no nvcc; a module without a fatbin is
// loaded from its PTX, which the driver JIT-compiles.
package kernels

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
)

//go:embed *.ptx fatbin
var files embed.FS

// fatbins is the fatbin folder of files.
var fatbins, _ = fs.Sub(files, "fatbin")

// PTX returns the PTX compiled from module.cu, NUL-free text for cuModuleLoadData.
func PTX(module string) ([]byte, error) {
	b, err := files.ReadFile(module + ".ptx")
	if err != nil {
		return nil, fmt.Errorf("kernels: no PTX for module %q (run make kernels): %w", module, err)
	}
	return b, nil
}

// ErrNoFatbin is returned by Fatbin when a module has no fatbin built from the PTX
// asked about.
var ErrNoFatbin = errors.New("kernels: no fatbin built from this PTX")

// Fatbin returns the embedded fatbin of module when it was built from ptx; else an
// error wrapping ErrNoFatbin (none, or one built from other PTX: run make kernels).
func Fatbin(module string, ptx []byte) ([]byte, error) { return FatbinIn(fatbins, module, ptx) }

// FatbinIn is Fatbin for the files of fsys (<module>.fatbin and
// <module>.fatbin.sha256), such as a directory of freshly built kernels.
func FatbinIn(fsys fs.FS, module string, ptx []byte) ([]byte, error) {
	sum, err := fs.ReadFile(fsys, module+".fatbin.sha256")
	if err != nil {
		return nil, fmt.Errorf("module %q: %w: %w", module, ErrNoFatbin, err)
	}
	if want := sha256.Sum256(ptx); !bytes.Equal(recordedSum(sum), want[:]) {
		return nil, fmt.Errorf("module %q: %w: the fatbin was built from other PTX (stale: run make kernels)", module, ErrNoFatbin)
	}
	b, err := fs.ReadFile(fsys, module+".fatbin")
	if err != nil {
		return nil, fmt.Errorf("module %q: %w: %w", module, ErrNoFatbin, err)
	}
	return b, nil
}

// recordedSum decodes the first field of a sha256sum line; nil when it is no sha256.
func recordedSum(line []byte) []byte {
	f := bytes.Fields(line)
	if len(f) == 0 {
		return nil
	}
	b, err := hex.DecodeString(string(f[0]))
	if err != nil || len(b) != sha256.Size {
		return nil
	}
	return b
}

// Package kernels holds the CUDA kernels of package cuda: CUDA C sources (one .cu file
// per op family, common.cuh, dequant.cuh, types.cuh) and the PTX generated from them by
// `make kernels` (nvcc -arch=compute_80 -ptx), committed so that building needs no nvcc.
package kernels

import (
	"embed"
	"fmt"
)

//go:embed *.ptx
var ptx embed.FS

// PTX returns the PTX compiled from module.cu, NUL-free text for cuModuleLoadData.
func PTX(module string) ([]byte, error) {
	b, err := ptx.ReadFile(module + ".ptx")
	if err != nil {
		return nil, fmt.Errorf("kernels: no PTX for module %q (run make kernels): %w", module, err)
	}
	return b, nil
}

package synth

import (
	"fmt"
	"strings"

	"github.com/infergo/infer/tensor"
)

// FileType is a whole-model type as llama-quantize names it (Q4_K_M, Q8_0, ...): the
// type of the 2-D weight tensors and the general.file_type id that records it.
//
// The _M mixtures are written "pure": every 2-D tensor gets the base k-quant (Q3_K,
// Q4_K, Q5_K), as llama-quantize --pure does, and general.file_type still says _M.
type FileType struct {
	Name   string       // Q4_K_M
	ID     uint32       // llama_ftype, stored as general.file_type
	Weight tensor.DType // type of every 2-D tensor
	Desc   string       // llama.cpp's llama_model_ftype_name ("Q4_K - Medium")
}

// fileTypes lists the supported file types in usage order.
var fileTypes = [...]FileType{
	{"F32", 0, tensor.F32, "all F32"},
	{"F16", 1, tensor.F16, "F16"},
	{"BF16", 32, tensor.BF16, "BF16"},
	{"Q8_0", 7, tensor.Q8_0, "Q8_0"},
	{"Q4_0", 2, tensor.Q4_0, "Q4_0"},
	{"Q4_1", 3, tensor.Q4_1, "Q4_1"},
	{"Q5_0", 8, tensor.Q5_0, "Q5_0"},
	{"Q5_1", 9, tensor.Q5_1, "Q5_1"},
	{"Q2_K", 10, tensor.Q2_K, "Q2_K - Medium"},
	{"Q3_K_M", 12, tensor.Q3_K, "Q3_K - Medium"},
	{"Q4_K_M", 15, tensor.Q4_K, "Q4_K - Medium"},
	{"Q5_K_M", 17, tensor.Q5_K, "Q5_K - Medium"},
	{"Q6_K", 18, tensor.Q6_K, "Q6_K"},
}

// FileTypes returns the supported file types.
func FileTypes() []FileType { return fileTypes[:] }

// FileTypeNames returns the names of the supported file types, for usage messages.
func FileTypeNames() []string {
	names := make([]string, len(fileTypes))
	for i, t := range fileTypes {
		names[i] = t.Name
	}
	return names
}

// LookupFileType returns the file type called name (case-insensitive).
func LookupFileType(name string) (FileType, error) {
	for _, t := range fileTypes {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return FileType{}, fmt.Errorf("synth: unknown type %q (want one of %s)", name, strings.Join(FileTypeNames(), ", "))
}

// FileTypeDesc returns llama.cpp's description of a general.file_type id ("Q4_K -
// Medium"), including the ids synth does not write, or "" for an unknown id.
func FileTypeDesc(id uint32) string {
	for _, t := range fileTypes {
		if t.ID == id {
			return t.Desc
		}
	}
	switch id {
	case 11:
		return "Q3_K - Small"
	case 13:
		return "Q3_K - Large"
	case 14:
		return "Q4_K - Small"
	case 16:
		return "Q5_K - Small"
	}
	return ""
}

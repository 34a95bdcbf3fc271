package tensor_test

import (
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// TestKQuantizeMatchesLlamaCpp re-quantizes the F32 synth-256 weights to each k-quant
// and compares the bytes, block by block, with the files llama-quantize --pure wrote.
// Without an importance matrix llama.cpp's quantize_q*_K call quantize_row_q*_K_ref,
// which is what tensor.Quantize reproduces.
func TestKQuantizeMatchesLlamaCpp(t *testing.T) {
	ref := readGGUFTensors(t, testdata.Path(t, "synth-256-F32.gguf"))
	for _, tc := range []struct {
		file string
		typ  tensor.DType
	}{
		{"synth-256-Q2_K.gguf", tensor.Q2_K},
		{"synth-256-Q3_K_M.gguf", tensor.Q3_K},
		{"synth-256-Q4_K_M.gguf", tensor.Q4_K},
		{"synth-256-Q5_K_M.gguf", tensor.Q5_K},
		{"synth-256-Q6_K.gguf", tensor.Q6_K},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			t.Parallel()
			q := readGGUFTensors(t, testdata.Path(t, tc.file))
			var diff, total, tensors int
			for name, qt := range q {
				if qt.Type != tc.typ {
					if qt.Type != tensor.F32 {
						t.Errorf("%s: unexpected type %v in a --pure %v file", name, qt.Type, tc.typ)
					}
					continue
				}
				src, ok := ref[name]
				if !ok || src.Type != tensor.F32 {
					t.Fatalf("%s: no F32 source tensor", name)
				}
				d, n := countBlockDiffs(t, tc.typ, tensor.Float32s(src.Data), qt.Data)
				if d > 0 {
					t.Logf("%s: %d of %d blocks differ", name, d, n)
				}
				diff, total, tensors = diff+d, total+n, tensors+1
			}
			if tensors == 0 {
				t.Fatalf("no %v tensors in %s", tc.typ, tc.file)
			}
			t.Logf("%v: %d of %d blocks differ in %d tensors", tc.typ, diff, total, tensors)
			if diff*10000 > total {
				t.Errorf("%v: %d of %d blocks differ from llama.cpp (limit 1 in 10,000)", tc.typ, diff, total)
			}
		})
	}
}

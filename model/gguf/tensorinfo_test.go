package gguf

import (
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestTensorInfoSizes checks Elements, Rows, RowLen and Bytes.
func TestTensorInfoSizes(t *testing.T) {
	ti := TensorInfo{Dims: []uint64{256, 768, 2}, Type: tensor.Q4_K}
	if ti.Elements() != 256*768*2 || ti.Rows() != 768*2 || ti.RowLen() != 256 || ti.Bytes() != 144*768*2 {
		t.Errorf("%+v: elements %d rows %d bytes %d", ti, ti.Elements(), ti.Rows(), ti.Bytes())
	}
	scalar := TensorInfo{Type: tensor.F32}
	if scalar.Elements() != 1 || scalar.Bytes() != 4 {
		t.Errorf("rank 0: elements %d bytes %d", scalar.Elements(), scalar.Bytes())
	}
}

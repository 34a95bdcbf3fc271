package synth

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

// TensorSpec is one tensor of a planned model.
type TensorSpec struct {
	Name string
	Type tensor.DType
	Dims []uint64 // GGUF order: Dims[0] is the row length (ne0)
	Norm bool     // an RMSNorm weight: F32, values near 1
	Bias bool     // a bias (qwen2's q, k, v): F32, small values around 0
}

// Elements is the number of elements in the tensor.
func (t TensorSpec) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d)
	}
	return n
}

// Rows is the number of rows (the product of every dimension but the first).
func (t TensorSpec) Rows() int64 { return t.Elements() / int64(t.Dims[0]) }

// Bytes is the size of the tensor's data.
func (t TensorSpec) Bytes() int64 { return t.Rows() * int64(t.Type.RowBytes(int(t.Dims[0]))) }

// Tensors returns the tensors llama.cpp's loader creates for s's architecture, with
// their shapes, in the order synth writes them (token_embd, output_norm, output, then
// each block's attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate,
// ffn_down, ffn_up, then qwen2's attn_{q,k,v}.bias or qwen3's attn_{q,k}_norm). 2-D
// tensors get type weight; norm weights and biases are F32.
func Tensors(s Shape, weight tensor.DType) []TensorSpec {
	e, v, f, kv := uint64(s.NEmbd), uint64(s.NVocab), uint64(s.NFF), uint64(s.KVDim())
	q, hd := uint64(s.QDim()), uint64(s.HeadDim())
	mat := func(name string, ne0, ne1 uint64) TensorSpec {
		return TensorSpec{Name: name, Type: weight, Dims: []uint64{ne0, ne1}}
	}
	norm := func(name string, n uint64) TensorSpec {
		return TensorSpec{Name: name, Type: tensor.F32, Dims: []uint64{n}, Norm: true}
	}
	bias := func(name string, n uint64) TensorSpec {
		return TensorSpec{Name: name, Type: tensor.F32, Dims: []uint64{n}, Bias: true}
	}
	ts := []TensorSpec{mat("token_embd.weight", e, v), norm("output_norm.weight", e), mat("output.weight", e, v)}
	for i := 0; i < s.NLayer; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			norm(p+"attn_norm.weight", e),
			mat(p+"attn_q.weight", e, q),
			mat(p+"attn_k.weight", e, kv),
			mat(p+"attn_v.weight", e, kv),
			mat(p+"attn_output.weight", q, e),
			norm(p+"ffn_norm.weight", e),
			mat(p+"ffn_gate.weight", e, f),
			mat(p+"ffn_down.weight", f, e),
			mat(p+"ffn_up.weight", e, f),
		)
		switch s.Architecture() {
		case "qwen2":
			ts = append(ts, bias(p+"attn_q.bias", q), bias(p+"attn_k.bias", kv), bias(p+"attn_v.bias", kv))
		case "qwen3":
			ts = append(ts, norm(p+"attn_q_norm.weight", hd), norm(p+"attn_k_norm.weight", hd))
		}
	}
	return ts
}

// Plan is everything synth writes for one model, before any weight is generated.
type Plan struct {
	Shape    Shape
	FileType FileType
	Tensors  []TensorSpec
}

// NewPlan checks that every 2-D tensor of s can be stored as ft and returns the plan.
func NewPlan(s Shape, ft FileType) (*Plan, error) {
	if s.NHead <= 0 || s.NHeadKV <= 0 || (s.KeyLength <= 0 && s.NEmbd%s.NHead != 0) || s.NHead%s.NHeadKV != 0 {
		return nil, fmt.Errorf("synth: shape %s: %d heads, %d KV heads do not divide n_embd %d", s.Name, s.NHead, s.NHeadKV, s.NEmbd)
	}
	if _, err := s.WithArch(s.Architecture()); err != nil {
		return nil, err
	}
	p := &Plan{Shape: s, FileType: ft, Tensors: Tensors(s, ft.Weight)}
	for _, t := range p.Tensors {
		if bs := uint64(t.Type.BlockSize()); bs == 0 || t.Dims[0]%bs != 0 {
			return nil, fmt.Errorf("synth: shape %s: tensor %s: row of %d is not a multiple of the %v block size %d", s.Name, t.Name, t.Dims[0], t.Type, bs)
		}
	}
	return p, nil
}

// Bytes is the total size of the plan's tensor data (without header or padding).
func (p *Plan) Bytes() int64 {
	var n int64
	for _, t := range p.Tensors {
		n += t.Bytes()
	}
	return n
}

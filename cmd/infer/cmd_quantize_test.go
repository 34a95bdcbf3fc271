package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/synth"
	"github.com/infergo/infer/tensor"
)

// smallModel writes an F32 model with two quantizable weights (one whose 48-long rows
// fit no 32-block type), a norm and metadata, and returns its path and weights.
func smallModel(t *testing.T) (string, map[string][]float32) {
	t.Helper()
	w := gguf.NewWriter()
	w.Set("general.architecture", gguf.Str("llama"))
	w.Set("general.file_type", gguf.Uint32(0))
	w.Set("llama.embedding_length", gguf.Uint32(64))
	w.Set("tokenizer.ggml.tokens", gguf.Strings([]string{"<unk>", "<s>", "</s>"}))
	weights := map[string][]float32{}
	add := func(name string, dims ...uint64) {
		n := int(dims[0])
		for _, d := range dims[1:] {
			n *= int(d)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(float64(i)*0.37+float64(len(name)))) * 0.05
		}
		weights[name] = v
		if err := w.AddTensorBytes(name, tensor.F32, dims, tensor.Float32Bytes(v)); err != nil {
			t.Fatal(err)
		}
	}
	add("token_embd.weight", 64, 3)
	add("blk.0.attn_norm.weight", 64)
	add("blk.0.ffn_down.weight", 48, 64)
	add("blk.0.attn_q.weight", 64, 64)
	path := filepath.Join(t.TempDir(), "small-F32.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path, weights
}

func TestQuantizeSmallModel(t *testing.T) {
	in, weights := smallModel(t)
	tests := []struct {
		typ      string
		fileType uint64
		types    map[string]tensor.DType
		tol      float64 // max abs error allowed, relative to the tensor's max abs value
	}{
		{"Q8_0", 7, map[string]tensor.DType{"token_embd.weight": tensor.Q8_0, "blk.0.attn_q.weight": tensor.Q8_0,
			"blk.0.ffn_down.weight": tensor.F16, "blk.0.attn_norm.weight": tensor.F32}, 1.0 / 127},
		{"f16", 1, map[string]tensor.DType{"token_embd.weight": tensor.F16, "blk.0.attn_q.weight": tensor.F16,
			"blk.0.ffn_down.weight": tensor.F16, "blk.0.attn_norm.weight": tensor.F32}, 1.0 / 1024},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.gguf")
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), []string{"quantize", in, out, tt.typ}, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkQuantizedMeta(t, f, tt.fileType)
			for name, want := range tt.types {
				ti, ok := f.Tensor(name)
				if !ok || ti.Type != want {
					t.Errorf("%s: type %v (found %v), want %v", name, ti.Type, ok, want)
					continue
				}
				checkClose(t, f, ti, weights[name], tt.tol)
			}
		})
	}
}

// checkQuantizedMeta checks the metadata was copied and the two keys llama.cpp sets come last.
func checkQuantizedMeta(t *testing.T, f *gguf.File, fileType uint64) {
	t.Helper()
	if tok, err := f.Strings("tokenizer.ggml.tokens"); err != nil || len(tok) != 3 || f.Arch() != "llama" {
		t.Errorf("metadata not copied: tokens %v (%v), arch %q", tok, err, f.Arch())
	}
	if ft, err := f.Uint("general.file_type"); err != nil || ft != fileType {
		t.Errorf("general.file_type %d (%v), want %d", ft, err, fileType)
	}
	if v, err := f.Uint("general.quantization_version"); err != nil || v != 2 {
		t.Errorf("general.quantization_version %d (%v), want 2", v, err)
	}
	if n := len(f.KV); n < 2 || f.KV[n-2].Key != "general.quantization_version" || f.KV[n-1].Key != "general.file_type" {
		t.Errorf("last keys %v, want quantization_version then file_type", f.KV[max(0, n-2):])
	}
}

// checkClose dequantizes ti and compares it with want.
func checkClose(t *testing.T, f *gguf.File, ti gguf.TensorInfo, want []float32, tol float64) {
	t.Helper()
	got := make([]float32, ti.Elements())
	if err := tensor.Dequantize(ti.Type, got, f.TensorData(ti)); err != nil {
		t.Fatalf("%s: %v", ti.Name, err)
	}
	var amax, maxErr float64
	for i := range want {
		amax = max(amax, math.Abs(float64(want[i])))
		maxErr = max(maxErr, math.Abs(float64(got[i]-want[i])))
	}
	if maxErr > tol*amax || (ti.Type == tensor.F32 && maxErr != 0) {
		t.Errorf("%s (%v): max error %g, allowed %g", ti.Name, ti.Type, maxErr, tol*amax)
	}
}

// TestQuantizeMatchesLlamaCpp quantizes synth-256-F32 to every type and expects the
// bytes of the synth-256-<TYPE>.gguf that 'llama-quantize --pure' wrote, and the same
// for the stories260K files whose types --pure reproduces.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	cases := []struct{ model, typ string }{{"stories260K", "F16"}, {"stories260K", "BF16"}, {"stories260K", "Q8_0"}, {"stories260K", "Q6_K"}}
	for _, ft := range synth.FileTypes()[1:] { // all but F32
		cases = append(cases, struct{ model, typ string }{"synth-256", ft.Name})
	}
	dir := t.TempDir()
	for _, c := range cases {
		in := testdata.Path(t, c.model+"-F32.gguf")
		want, err := os.ReadFile(testdata.Path(t, c.model+"-"+c.typ+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, c.model+"-"+c.typ+".gguf")
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"quantize", in, out, c.typ}, &stdout, &stderr); err != nil {
			t.Errorf("%s %s: %v", c.model, c.typ, err)
			continue
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s %s: output differs from llama-quantize's (%d vs %d bytes)", c.model, c.typ, len(got), len(want))
		}
		os.Remove(out)
	}
}

func TestTargetType(t *testing.T) {
	ti := func(name string, dims ...uint64) gguf.TensorInfo {
		return gguf.TensorInfo{Name: name, Dims: dims, Type: tensor.F32}
	}
	tests := []struct {
		ti   gguf.TensorInfo
		base tensor.DType
		want tensor.DType
	}{
		{ti("blk.0.attn_q.weight", 256, 256), tensor.Q4_K, tensor.Q4_K},
		{ti("blk.0.attn_q.weight", 64, 64), tensor.Q4_K, tensor.Q5_0},
		{ti("blk.0.attn_q.weight", 64, 64), tensor.Q5_K, tensor.Q5_1},
		{ti("blk.0.attn_q.weight", 64, 64), tensor.Q6_K, tensor.Q8_0},
		{ti("blk.0.attn_q.weight", 64, 64), tensor.Q2_K, tensor.Q4_0},
		{ti("blk.0.attn_q.weight", 64, 64), tensor.Q3_K, tensor.Q4_0},
		{ti("blk.0.ffn_down.weight", 172, 64), tensor.Q4_K, tensor.F16},
		{ti("blk.0.ffn_down.weight", 172, 64), tensor.Q8_0, tensor.F16},
		{ti("blk.0.ffn_down.weight", 172, 64), tensor.BF16, tensor.BF16},
		{ti("output.weight", 64, 512), tensor.Q8_0, tensor.Q8_0},
		{ti("blk.0.attn_norm.weight", 256), tensor.Q4_0, tensor.F32},
		{ti("blk.0.attn_norm.weight", 256, 1), tensor.Q4_0, tensor.F32},
		{ti("blk.0.ffn_gate_inp.weight", 256, 8), tensor.Q4_0, tensor.F32},
		{ti("rope_freqs", 32, 2), tensor.Q4_0, tensor.F32},
	}
	for _, tt := range tests {
		if got := targetType(tt.ti, tt.base); got != tt.want {
			t.Errorf("targetType(%s %v, %v) = %v, want %v", tt.ti.Name, tt.ti.Dims, tt.base, got, tt.want)
		}
	}
}

func TestParseFtype(t *testing.T) {
	tests := []struct {
		in   string
		id   uint32
		base tensor.DType
	}{
		{"Q4_K_M", 15, tensor.Q4_K}, {"q4_k", 15, tensor.Q4_K}, {"Q3_K_M", 12, tensor.Q3_K}, {"bf16", 32, tensor.BF16},
		{"7", 7, tensor.Q8_0}, {"F32", 0, tensor.F32}, {"Q2_K", 10, tensor.Q2_K}, {"Q6_K", 18, tensor.Q6_K},
	}
	for _, tt := range tests {
		ft, err := parseFtype(tt.in)
		if err != nil || ft.ID != tt.id || ft.Weight != tt.base {
			t.Errorf("parseFtype(%q) = %+v, %v; want id %d base %v", tt.in, ft, err, tt.id, tt.base)
		}
	}
	if _, err := parseFtype("Q4_K_S"); err == nil || !strings.Contains(err.Error(), "Q4_K_M") {
		t.Errorf("parseFtype(Q4_K_S) error %v, want the list of types", err)
	}
}

func TestLayerOrder(t *testing.T) {
	names := []string{"blk.10.attn_q.weight", "token_embd.weight", "blk.2.ffn_up.weight", "output.weight",
		"blk.2.attn_k.weight", "output_norm.weight", "blk.x.weight"}
	infos := make([]gguf.TensorInfo, len(names))
	for i, n := range names {
		infos[i].Name = n
	}
	slices.SortStableFunc(infos, layerOrder)
	var got []string
	for _, ti := range infos {
		got = append(got, ti.Name)
	}
	want := []string{"blk.x.weight", "output.weight", "output_norm.weight", "token_embd.weight",
		"blk.2.attn_k.weight", "blk.2.ffn_up.weight", "blk.10.attn_q.weight"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestQuantizeErrors(t *testing.T) {
	in, _ := smallModel(t)
	// A 2-D I32 weight cannot be dequantized: the command must fail and leave no file.
	w := gguf.NewWriter()
	w.AddTensorBytes("blk.0.odd.weight", tensor.I32, []uint64{32, 2}, make([]byte, 256))
	odd := filepath.Join(t.TempDir(), "odd.gguf")
	if err := w.WriteFile(odd); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.gguf")
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{in, out}, true, "want IN OUT TYPE"},
		{[]string{in, out, "Q9_9"}, true, `unknown type "Q9_9"`},
		{[]string{"-t", "-1", in, out, "Q8_0"}, true, "-t"},
		{[]string{"-nope", in, out, "Q8_0"}, true, "nope"},
		{[]string{filepath.Join(t.TempDir(), "missing.gguf"), out, "Q8_0"}, false, "no such file"},
		{[]string{odd, out, "Q8_0"}, false, `blk.0.odd.weight I32 -> Q8_0: tensor: dequantize I32: not supported`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"quantize"}, tt.args...), &stdout, &stderr)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &ue) != tt.usage {
			t.Errorf("quantize %q: error %v (usage %v), want %q (usage %v)", tt.args, err, errors.As(err, &ue), tt.want, tt.usage)
		}
		if left, _ := os.ReadDir(filepath.Dir(out)); len(left) > 0 {
			t.Errorf("quantize %q left %s behind", tt.args, left[0].Name())
		}
	}
}

// TestConvertBatches converts a tensor in one-row batches and in one batch, on 1 and 3
// threads, and expects the same bytes.
func TestConvertBatches(t *testing.T) {
	in, _ := smallModel(t)
	f, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ti, _ := f.Tensor("blk.0.attn_q.weight")
	var want []byte
	for _, c := range []converter{{batch: batchBytes, threads: 1}, {batch: 1, threads: 3}, {batch: 100, threads: 2}} {
		c.ctx, c.f, c.src, c.dst = context.Background(), f, ti, tensor.Q8_0
		var buf bytes.Buffer
		if err := c.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = buf.Bytes()
		}
		if buf.Len() != tensor.Q8_0.RowBytes(64)*64 || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("batch %d threads %d: %d bytes, differs from one batch", c.batch, c.threads, buf.Len())
		}
	}
}

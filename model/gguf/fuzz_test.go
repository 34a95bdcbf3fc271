package gguf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/infergo/infer/tensor"
)

// seedFile is a small valid file with every kind of field: the fuzzer's starting point.
func seedFile(align uint32) []byte {
	w := NewWriter()
	w.Set("general.architecture", Str("llama"))
	if align != 0 {
		w.Set("general.alignment", Uint32(align))
	}
	w.Set("llama.block_count", Uint32(1))
	w.Set("llama.attention.layer_norm_rms_epsilon", Float32(1e-5))
	w.Set("tokenizer.ggml.tokens", Strings([]string{"<unk>", "<s>", "</s>", "a", "b"}))
	w.Set("tokenizer.ggml.token_type", Int32Array([]int32{2, 3, 3, 1, 1}))
	w.Set("tokenizer.ggml.add_bos_token", Bool(true))
	w.Set("x.nested", Array(ArrayType, []Value{Uint64Array([]uint64{1}), Strings([]string{"z"})}))
	w.AddTensorBytes("output_norm.weight", tensor.F32, []uint64{4}, make([]byte, 16))
	w.AddTensorBytes("token_embd.weight", tensor.Q8_0, []uint64{32, 2}, bytes.Repeat([]byte{1}, 68))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// FuzzOpen parses arbitrary bytes. A file that parses must hand out in-bounds tensor
// data, format its metadata, and survive a rewrite: writing it with Writer and parsing
// that must give a file that rewrites to the same bytes.
func FuzzOpen(f *testing.F) {
	f.Add(seedFile(0))
	f.Add(seedFile(64))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is not ErrFormat", err)
			}
			return
		}
		for _, ti := range file.Tensors {
			if d := file.TensorData(ti); uint64(len(d)) != ti.Bytes() {
				t.Fatalf("tensor %q: %d bytes of data, want %d", ti.Name, len(d), ti.Bytes())
			}
		}
		for _, kv := range file.KV {
			_ = kv.Value.String()
		}
		once := rewrite(t, file)
		again, err := Parse(once)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if twice := rewrite(t, again); !bytes.Equal(once, twice) {
			t.Fatal("rewriting is not idempotent")
		}
	})
}

// rewrite writes f's metadata and tensors with a Writer.
func rewrite(t *testing.T, f *File) []byte {
	w := NewWriter()
	w.SetMetadataPadding(f.MetadataPadded())
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
	for _, ti := range f.Tensors {
		if err := w.AddTensorBytes(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)); err != nil {
			t.Fatalf("AddTensorBytes: %v", err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

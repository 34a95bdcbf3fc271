package gguf_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// Write a small model with a Writer, then parse it back.
func ExampleWriter() {
	w := gguf.NewWriter()
	w.Set("general.architecture", gguf.Str("llama"))
	w.Set("llama.embedding_length", gguf.Uint32(8))
	w.Set("tokenizer.ggml.tokens", gguf.Strings([]string{"<unk>", "<s>", "</s>", "a", "b", "c"}))
	norm := make([]float32, 8)
	for i := range norm {
		norm[i] = 1
	}
	if err := w.AddTensorBytes("output_norm.weight", tensor.F32, []uint64{8}, tensor.Float32Bytes(norm)); err != nil {
		log.Fatal(err)
	}
	// Streamed data: the function is called while the file is written.
	err := w.AddTensor("token_embd.weight", tensor.F16, []uint64{8, 6}, func(out io.Writer) error {
		_, err := out.Write(make([]byte, 8*6*2))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	n, _ := f.Uint("llama.embedding_length")
	tokens, _ := f.Value("tokenizer.ggml.tokens")
	fmt.Println(f.Arch(), n, tokens)
	for _, ti := range f.Tensors {
		fmt.Println(ti.Name, ti.Type, ti.Dims, ti.Bytes(), ti.Offset)
	}
	// Output:
	// llama 8 [6 strings: "<unk>", "<s>", "</s>", ... ]
	// output_norm.weight F32 [8] 32 0
	// token_embd.weight F16 [8 6] 96 32
}

// Open maps a file and reads tensor data without copying it.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	w := gguf.NewWriter()
	w.Set("general.architecture", gguf.Str("llama"))
	w.AddTensorBytes("w", tensor.F32, []uint64{2}, tensor.Float32Bytes([]float32{1.5, -2}))
	if err := w.WriteFile(path); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ti, _ := f.Tensor("w")
	fmt.Println(tensor.Float32s(f.TensorData(ti)))
	_, err = f.Float("general.architecture")
	fmt.Println(err)
	// Output:
	// [1.5 -2]
	// gguf: key "general.architecture": type string, want float32 or float64
}

package synth_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/synth"
)

// A plan lists the tensors of a model before any weight is generated.
func ExampleNewPlan() {
	s, _ := synth.LookupShape("70b")
	ft, _ := synth.LookupFileType("Q4_0")
	p, err := synth.NewPlan(s, ft)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d tensors, %d params, %.1f GB\n", len(p.Tensors), s.Params(), float64(p.Bytes())/1e9)
	fmt.Println(p.Tensors[4].Name, p.Tensors[4].Type, p.Tensors[4].Dims)
	// Output:
	// 723 tensors, 68976648192 params, 38.8 GB
	// blk.0.attn_q.weight Q4_0 [8192 8192]
}

// Write streams a model to disk; Check confirms that llama.cpp's loader would accept it.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "synth")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, _ := synth.LookupShape("tiny")
	ft, _ := synth.LookupFileType("Q4_K_M")
	p, _ := synth.NewPlan(s, ft)
	path := filepath.Join(dir, "tiny.gguf")
	if err := synth.Write(path, p, synth.Options{Seed: 42}); err != nil {
		panic(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	ti, _ := f.Tensor("blk.0.ffn_down.weight")
	fmt.Println(ti.Type, ti.Dims, synth.Check(f))
	// Output: Q4_K [512 256] <nil>
}

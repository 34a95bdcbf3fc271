package gpu_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/infergo/infer/gpu"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/model/synth"
)

// Load with no ordinals runs the model on the CPU: the same calls as on GPUs, here on
// synth's tiny random-weight model.
func ExampleLoad_cpu() {
	dir, err := os.MkdirTemp("", "gpu")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	shape, _ := synth.LookupShape("tiny")
	ft, _ := synth.LookupFileType("F32")
	plan, err := synth.NewPlan(shape, ft)
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "tiny.gguf")
	if err := synth.Write(path, plan, synth.Options{Seed: 1, Threads: 1}); err != nil {
		log.Fatal(err)
	}

	m, err := gpu.Load(context.Background(), path, gpu.Options{Model: model.Options{ContextSize: 64, Threads: 1}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession()
	if err != nil {
		log.Fatal(err)
	}
	logits, err := s.Eval([]int32{1, 42, 7}, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(m.Devices()), "GPUs,", len(m.Plan().Stages), "stage,", len(logits), "logits at position", s.Pos())
	// Output: 0 GPUs, 1 stage, 512 logits at position 3
}

// Load splits a model over two GPUs (or, with Ordinals {0, 1, 0, 1}, four stages on
// two GPUs), with peer copies between them where the GPUs allow; Close undoes it all.
// Sessions may run from several goroutines at once.
func ExampleLoad_twoGPUs() {
	ctx := context.Background()
	m, err := gpu.Load(ctx, "llama-2-7b.Q4_0.gguf", gpu.Options{
		Ordinals: []int{0, 1},
		Model:    model.Options{ContextSize: 4096},
	})
	if err != nil {
		log.Fatal(err) // e.g. "... does not fit: device cuda:1 ... needs 1.20 GiB more ..."
	}
	defer m.Close()
	fmt.Print(m.Plan())
	for _, p := range m.Peers().Pairs() {
		fmt.Printf("%s -> %s: %v\n", m.Devices()[p.From].Name(), m.Devices()[p.To].Name(), p.State)
	}
	res, err := model.Generate(ctx, m.Model, "Once upon a time", model.GenerateOptions{NPredict: 64}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
}

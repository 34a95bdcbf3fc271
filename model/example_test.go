package model_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/infergo/infer/model"
	"github.com/infergo/infer/model/synth"
)

// A Session holds a KV cache; Eval appends tokens to it and returns their logits, one
// row of NVocab per token when all is true. Here the model is a random-weight one of
// synth's tiny shape.
func ExampleModel_NewSession() {
	dir, err := os.MkdirTemp("", "model")
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
	m, err := model.Load(path, model.Options{Threads: 1, ContextSize: 64})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	logits, err := s.Eval([]int32{1, 42, 7}, true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(logits)/m.Config().NVocab, "rows of", m.Config().NVocab, "logits; position", s.Pos(), "of", s.Ctx())
	logits, _ = s.Eval([]int32{9}, false)
	fmt.Println(len(logits), "logits for the last token; position", s.Pos())
	// Output:
	// 3 rows of 512 logits; position 3 of 64
	// 512 logits for the last token; position 4
}

// Warmup makes a fresh session's decode-step recording (a CUDA graph) before the
// prompt, so that the first generated token does not pay for it, and leaves the cache
// empty; on the CPU, which records nothing, it does nothing. Generate calls it.
func ExampleSession_Warmup() {
	m, done := tinyModel()
	defer done()
	s, err := m.NewSession()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	prompt := []int32{1, 42, 7}
	if err := s.Warmup(prompt[0]); err != nil {
		log.Fatal(err)
	}
	fmt.Println("position after the warmup:", s.Pos())
	if _, err := s.Eval(prompt, false); err != nil {
		log.Fatal(err)
	}
	fmt.Println("position after the prompt:", s.Pos())
	// Output:
	// position after the warmup: 0
	// position after the prompt: 3
}

// Greedy decoding picks the most likely token; ties go to the lowest id.
func ExampleNewSampler_greedy() {
	s := model.NewSampler(model.SamplerOptions{}, nil)
	logits := []float32{0.5, 2.5, -1, 2.5}
	fmt.Println(s.Sample(logits, nil))
	// Output: 1
}

// With top-k 2 only the two most likely tokens can be drawn, whatever the seed.
func ExampleNewSampler_topK() {
	opts := model.SamplerOptions{Temp: 1, TopK: 2}
	s := model.NewSampler(opts, rand.New(rand.NewPCG(1, 2)))
	logits := []float32{3, 0, 2.9, 1}
	seen := map[int32]bool{}
	for range 100 {
		seen[s.Sample(logits, nil)] = true
	}
	fmt.Println(seen[0], seen[1], seen[2], seen[3])
	// Output: true false true false
}

// A repeat penalty divides the logits of recently seen tokens, so the greedy choice
// moves away from token 0 once it is in the history.
func ExampleSampler_Sample_repeatPenalty() {
	opts := model.SamplerOptions{RepeatPenalty: 1.5, RepeatLastN: 64}
	s := model.NewSampler(opts, nil)
	logits := []float32{3, 2.5, 1}
	fmt.Println(s.Sample(logits, nil), s.Sample(logits, []int32{0}))
	// Output: 0 1
}

// Generate streams a continuation of a prompt token by token.
func ExampleGenerate() {
	m, err := model.Load("stories260K-F32.gguf", model.Options{ContextSize: 256})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	opts := model.GenerateOptions{NPredict: 32} // zero SamplerOptions: greedy
	res, err := model.Generate(context.Background(), m, "Once upon a time", opts, func(t model.Token) error {
		_, err := os.Stdout.Write(t.Piece)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n%d prompt tokens, %d generated at %.0f tokens/s\n", len(res.PromptTokens), len(res.Tokens), res.GenTokensPerSecond())
}

// Perplexity reproduces llama-perplexity's numbers: here
// `llama-perplexity -c 128 -b 128 --chunks 20 -ctk f32 -ctv f32`.
func ExamplePerplexity() {
	text, err := os.ReadFile("tinyshakespeare.txt")
	if err != nil {
		log.Fatal(err)
	}
	m, err := model.Load("stories260K-F32.gguf", model.Options{ContextSize: 128, BatchSize: 128, KVType: model.KVCacheF32})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	opts := model.PerplexityOptions{Ctx: 128, Batch: 128, Chunks: 20}
	res, err := model.Perplexity(context.Background(), m, string(text), opts, func(c model.ChunkResult) {
		fmt.Printf("[%d]%.4f,", c.Chunk, c.PPL)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", res.PPL, res.Uncertainty)
}

// tinyModel loads a random-weight model of synth's tiny shape (as ExampleModel_NewSession
// makes it) on the CPU; done closes it and removes its file.
func tinyModel() (m *model.Model, done func()) {
	dir, err := os.MkdirTemp("", "model")
	if err != nil {
		log.Fatal(err)
	}
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
	if m, err = model.Load(path, model.Options{Threads: 1, ContextSize: 64}); err != nil {
		log.Fatal(err)
	}
	return m, func() { m.Close(); os.RemoveAll(dir) }
}

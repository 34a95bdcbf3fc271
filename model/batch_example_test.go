package model_test

import (
	"context"
	"fmt"
	"log"

	"github.com/infergo/infer/model"
)

// A Batch evaluates several sessions' tokens in one forward pass: here the prompts of
// two independent sequences, then one decode step of both. Each session keeps its own
// KV cache and position; each sequence's rows attend only to its own cache.
func ExampleBatch() {
	m, done := tinyModel() // synth's tiny shape, as ExampleModel_NewSession makes it
	defer done()
	a, err := m.NewSession()
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := m.NewSession()
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	batch, err := m.NewBatch(model.BatchOptions{Rows: 16})
	if err != nil {
		log.Fatal(err)
	}
	defer batch.Close()

	// Two prompts in one pass: the last row's logits of a, every row's of b.
	ctx := context.Background()
	out, err := batch.Eval(ctx, []model.SeqInput{
		{Session: a, Tokens: []int32{1, 42, 7}, Logits: 1},
		{Session: b, Tokens: []int32{1, 9, 9, 30, 2}, Logits: 5},
	})
	if err != nil {
		log.Fatal(err)
	}
	V := m.Config().NVocab
	fmt.Println("prompts:", len(out[0])/V, "and", len(out[1])/V, "rows of logits; positions", a.Pos(), b.Pos())

	// One decode step for both sequences.
	out, err = batch.Eval(ctx, []model.SeqInput{
		{Session: a, Tokens: []int32{11}, Logits: 1},
		{Session: b, Tokens: []int32{12}, Logits: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("step:", len(out[0]), "and", len(out[1]), "logits; positions", a.Pos(), b.Pos())
	// Output:
	// prompts: 1 and 5 rows of logits; positions 3 5
	// step: 512 and 512 logits; positions 4 6
}

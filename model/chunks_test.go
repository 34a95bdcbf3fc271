package model

import (
	"math"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

func TestPassMicroBatch(t *testing.T) {
	for _, c := range []struct{ ub, rows, stages, want int }{
		{0, 2048, 1, 2048},  // one stage: the whole pass
		{512, 2048, 1, 512}, // asked for
		{0, 2048, 2, 0},     // several stages: the model's (-ub)
		{256, 2048, 3, 256},
	} {
		if got := passMicroBatch(c.ub, c.rows, c.stages); got != c.want {
			t.Errorf("passMicroBatch(%d, %d, %d) = %d, want %d", c.ub, c.rows, c.stages, got, c.want)
		}
	}
}

// TestPerplexityWholePass checks that a one-stage model evaluates a packed pass as one
// micro-batch by default, and that its perplexity is that of micro-batches of one chunk
// to float order (1e-6 relative).
func TestPerplexityWholePass(t *testing.T) {
	text := loadText(t)
	const file = "stories260K-Q4_0.gguf"
	m, err := Load(testdata.Path(t, file), Options{ContextSize: 128, BatchSize: 512, KVType: kvOf(tensor.F16)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := PlanChunks(len(m.Tokenizer().Encode(text, true)), PerplexityOptions{Ctx: 128, Batch: 512, Chunks: 20})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := newModelEvaluator(m, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.batch.sc.ub; got != 512 {
		t.Errorf("default micro-batch of a pass of 512 on one stage: %d, want 512", got)
	}
	ev.close()
	m.Close()
	whole := pplRunUB(t, file, text, tensor.F16, 512, 0, nil)
	each := pplRunUB(t, file, text, tensor.F16, 512, 128, nil)
	if d := math.Abs(whole.PPL/each.PPL - 1); d > 1e-6 || len(whole.Chunks) != len(each.Chunks) {
		t.Errorf("whole pass: PPL %.10g over %d chunks; micro-batches of 128: %.10g over %d", whole.PPL, len(whole.Chunks), each.PPL, len(each.Chunks))
	}
	t.Logf("whole pass %.10g, micro-batches of 128 %.10g", whole.PPL, each.PPL)
}

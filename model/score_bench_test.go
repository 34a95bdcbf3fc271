package model

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkScoreRow is the host-side scoring of one row of a 32000-token vocabulary:
// the log-softmax of perplexity, of a base file's record, and of a KL-divergence row.
func BenchmarkScoreRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	rec := make([]byte, recordBytes(len(logits)))
	b.Run("nll", func(b *testing.B) {
		for b.Loop() {
			nllOf(logits, 7)
		}
	})
	b.Run("base record", func(b *testing.B) {
		for b.Loop() {
			quantizeLogProbs(rec, logits, 7)
		}
	})
	b.Run("kld", func(b *testing.B) {
		quantizeLogProbs(rec, logits, 7)
		for b.Loop() {
			kldRow(logits, rec, 7)
		}
	})
}

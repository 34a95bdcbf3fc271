package bench

import (
	"flag"
	"fmt"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model"
)

// benchModels are the shared test models llama-bench anchor figures exist for
// (../shared/testdata/llamacpp-cpu-bench.txt, llamacpp-cpu-bench-avx2.txt), and the
// F16 and synth-256 F32 files whose weights go through backend/cpu's own kernels.
var benchModels = []string{
	"stories260K-F32.gguf", "stories260K-F16.gguf", "synth-256-F32.gguf", "synth-256-F16.gguf",
	"stories260K-Q4_0.gguf", "synth-256-Q4_0.gguf", "synth-256-Q8_0.gguf",
}

// benchThreads is the CPU thread count of the benchmarks' sessions (0: the default).
// With -threads 1 the cpu-ms/tok metric, the process's CPU time per token, measures
// the kernels themselves, little disturbed by other processes on a shared machine.
var benchThreads = flag.Int("threads", 0, "CPU threads of the benchmark sessions (0: default)")

// session loads a test model (skipping b without test data) and opens a session.
func session(b *testing.B, name string, ctx int) (*model.Session, Model) {
	b.Helper()
	path := testdata.Path(b, name)
	info, err := Describe(path)
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.Load(path, model.Options{ContextSize: ctx, Threads: *benchThreads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	s, err := m.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, info
}

// BenchmarkDecode measures generation (llama-bench tg): one token per Eval, the cache
// emptied every 256 tokens. It reports tokens per second.
func BenchmarkDecode(b *testing.B) {
	const ctx = 256
	for _, name := range benchModels {
		b.Run(name, func(b *testing.B) {
			s, info := session(b, name, ctx)
			in := Input{NVocab: info.NVocab, BOS: info.BOS}
			tok := []int32{max(in.BOS, 0)}
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				if s.Pos() == ctx {
					s.Reset()
				}
				if _, err := s.Eval(tok, false); err != nil {
					b.Fatal(err)
				}
				tok[0] = int32((n*7919 + 13) % in.NVocab)
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(n), "cpu-ms/tok")
		})
	}
}

// BenchmarkPrefill measures prompt processing (llama-bench pp64): a batch of 64 tokens
// from an empty cache per iteration. It reports tokens per second.
func BenchmarkPrefill(b *testing.B) {
	const batch = 64
	for _, name := range benchModels {
		b.Run(fmt.Sprintf("%s/pp%d", name, batch), func(b *testing.B) {
			s, info := session(b, name, batch)
			tokens := make([]int32, batch)
			for i := range tokens {
				tokens[i] = int32((i*7919 + 13) % info.NVocab)
			}
			tokens[0] = max(info.BOS, 0)
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				s.Reset()
				if _, err := s.Eval(tokens, false); err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(n), "cpu-ms/tok")
		})
	}
}

package model

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// TestLogitsMatchLlamaCpp decodes the fixed 16-token prompt as one batch with every
// row's logits and compares them with llama.cpp's, with an F32 cache (flash attention
// off) and the default F16 cache (flash attention on).
func TestLogitsMatchLlamaCpp(t *testing.T) {
	ref := testdata.LoadReference(t)
	for _, rm := range ref.Models {
		if rm.Logits == nil || rm.LogitsKVF32NoFA == nil {
			continue
		}
		for _, kv := range []tensor.DType{tensor.F32, tensor.F16} {
			rl := rm.Logits
			if kv == tensor.F32 {
				rl = rm.LogitsKVF32NoFA
			}
			t.Run(fmt.Sprintf("%s/kv=%v", strings.TrimSuffix(rm.File, ".gguf"), kv), func(t *testing.T) {
				tokens := rm.Logits.Tokens // the F32-cache entry shares the prompt
				want := readLogits(t, rl.File, len(tokens), rm.NVocab)
				_, s := openSession(t, testdata.Path(t, rm.File), Options{Threads: 2, KVType: kvOf(kv), ContextSize: 64})
				got, err := s.Eval(tokens, true)
				if err != nil {
					t.Fatal(err)
				}
				diff, at := maxAbsDiff(got, want)
				mean := meanAbsDiff(got, want)
				t.Logf("%s kv=%v: max abs logit diff %.3g (row %d), mean %.3g", rm.File, kv, diff, at/rm.NVocab, mean)
				tol := logitTolerance(rm.File, kv)
				if diff > tol.max || mean > tol.mean {
					t.Errorf("logit diff max %.3g mean %.3g, want at most %.3g and %.3g", diff, mean, tol.max, tol.mean)
				}
				for i, am := range rm.Logits.Argmax {
					row := got[i*rm.NVocab : (i+1)*rm.NVocab]
					if g := argmax(row); g != am && !nearTie(want[i*rm.NVocab:(i+1)*rm.NVocab], g, am, tol.tie) {
						t.Errorf("row %d: argmax %d, llama.cpp %d", i, g, am)
					}
				}
			})
		}
	}
}

// greedyTie is how close our two logits must be for a greedy mismatch to count as a
// tie: 1e-3, except 1e-2 for Q4_K weights, the one type whose products
// (backend/cpu's repacked Q4_K gemv/gemm order) still differ from llama.cpp's in the
// last bits (synth-256-Q4_K_M: logits 3.6e-7 apart after the prompt, top two 4e-3 to
// 8e-3 apart where greedy parts; synth-256 is near-uniform by design, and an 8-bit
// activation rounding the other way moves a logit by up to ~1e-2).
func greedyTie(file string) float64 {
	if strings.Contains(file, "-Q4_K") {
		return 1e-2
	}
	return 1e-3
}

// tolerance bounds the difference from llama.cpp's logits.
type tolerance struct {
	max, mean float64 // largest and mean absolute logit difference
	tie       float64 // argmax may differ where llama.cpp's two logits are this close
}

// logitTolerance is the accepted difference for a model file and cache type. F32
// weights with an F32 cache: 1e-3 (the design's bound; we measure under 1e-5). An F16
// cache rounds K and V, so a one-ulp difference upstream (summation order, which our
// kernels follow but cannot always reproduce) can move a value by an F16 step: 5e-3.
// Quantized weights round every activation to 8 bits before each matmul, and an ulp
// difference moves a quant by a whole step of its block scale: a few rows then differ
// by up to ~2% of the logit range, the mean stays small.
//
// The Q8_0 files (Q8_0 matrices, F16 ffn_down in stories260K) use only kernels whose
// order backend/cpu reproduces, and match llama.cpp bit for bit with either cache.
func logitTolerance(file string, kv tensor.DType) tolerance {
	switch {
	case strings.Contains(file, "-Q8_0"):
		return tolerance{}
	case strings.Contains(file, "-F32") && kv == tensor.F32:
		return tolerance{max: 1e-3, mean: 1e-4, tie: 1e-3}
	case strings.Contains(file, "-F32"):
		return tolerance{max: 5e-3, mean: 5e-4, tie: 5e-3}
	}
	return tolerance{max: 0.3, mean: 0.02, tie: 0.05}
}

func readLogits(t *testing.T, name string, rows, vocab int) []float32 {
	t.Helper()
	b, err := os.ReadFile(testdata.Path(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(b) != 4*rows*vocab {
		t.Fatalf("%s: %d bytes, want %d×%d float32", name, len(b), rows, vocab)
	}
	return append([]float32(nil), tensor.Float32s(b)...)
}

func maxAbsDiff(a, b []float32) (float64, int) {
	worst, at := 0.0, 0
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	return worst, at
}

// argmax returns the index of the largest value, the lowest index on ties.
func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}

// nearTie reports whether the logits of a and b are within tol.
func nearTie(logits []float32, a, b int32, tol float64) bool {
	return math.Abs(float64(logits[a])-float64(logits[b])) <= tol
}

func meanAbsDiff(a, b []float32) float64 {
	var sum float64
	for i := range a {
		sum += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return sum / float64(len(a))
}

// knownGreedyDivergence lists the greedy steps where we are known to pick another token
// than llama.cpp with our top-2 logits more than greedyTie apart: an open conformance gap
// (issue 13), not a tie. The test checks that exactly these steps differ, so a fix shows
// (the entry must then go) as does any new divergence. The cause is in the weight type's
// dot products for the decode path (the attention, F16 cache included, is bit-exact on
// these files' prompts): synth-256-Q5_1 matches on every step with the x86 Q5_1 order
// (dotQ5_1x86Go), which in turn moves stories260K-Q5_1's perplexity past its tolerance;
// synth-256-Q6_K's cause is not found yet.
var knownGreedyDivergence = map[string]map[string][]int{
	"synth-256-Q5_1.gguf": {"The little dog": {26}},
	"synth-256-Q6_K.gguf": {"Once upon a time": {16}},
}

// TestGreedyMatchesLlamaCpp decodes every reference greedy continuation: the prompt as
// one batch, then 32 tokens one per decode, argmax with the lowest id winning ties,
// context 256, F16 cache. Each step is fed llama.cpp's token (teacher forcing), so a
// mismatch where our logits of the two tokens are within greedyTie is logged as a tie
// and every later token is still compared; any other mismatch is an error, except the
// steps of knownGreedyDivergence, which must differ.
func TestGreedyMatchesLlamaCpp(t *testing.T) {
	ref := testdata.LoadReference(t)
	for _, rm := range ref.Models {
		t.Run(strings.TrimSuffix(rm.File, ".gguf"), func(t *testing.T) {
			_, s := openSession(t, testdata.Path(t, rm.File), Options{Threads: 2, KVType: KVCacheF16, ContextSize: 256})
			for _, g := range rm.Greedy {
				s.Reset()
				logits, err := s.Eval(g.PromptTokens, false)
				ties := 0
				known := knownGreedyDivergence[rm.File][g.Prompt]
				var diverged []int
				for i, want := range g.GeneratedTokens {
					if err != nil {
						t.Fatalf("%q token %d: %v", g.Prompt, i, err)
					}
					if got := argmax(logits); got != want {
						switch {
						case slices.Contains(known, i):
							diverged = append(diverged, i)
							t.Logf("%q token %d: %d, llama.cpp %d (logits %g, %g): the known divergence", g.Prompt, i, got, want, logits[got], logits[want])
						case !nearTie(logits, got, want, greedyTie(rm.File)):
							t.Errorf("%q token %d: %d, llama.cpp %d (logits %g, %g)", g.Prompt, i, got, want, logits[got], logits[want])
						default:
							ties++
							t.Logf("%q token %d: %d, llama.cpp %d: a tie (logits %g, %g); going on with llama.cpp's token",
								g.Prompt, i, got, want, logits[got], logits[want])
						}
					}
					logits, err = s.Eval([]int32{want}, false)
				}
				if !slices.Equal(diverged, known) {
					t.Errorf("%q: known divergence at tokens %v, found at %v: update knownGreedyDivergence", g.Prompt, known, diverged)
				}
				if err != nil {
					t.Fatalf("%q after the last token: %v", g.Prompt, err)
				}
				if ties > len(g.GeneratedTokens)/4 {
					t.Errorf("%q: %d of %d tokens are ties: the comparison says little", g.Prompt, ties, len(g.GeneratedTokens))
				}
			}
		})
	}
}

package model

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// fakeEval returns logits that depend only on the position and the token there, and
// records how it was called.
type fakeEval struct {
	nVocab int
	logit  func(pos int, tok int32, v int) float32
	pos    []int     // per sequence
	calls  []string  // "reset <n>" or "eval <tokens>/<logits> ..." (one per sequence)
	fed    [][]int32 // tokens fed, per chunk (sequence i of a pass is the pass's i-th chunk)
	base   int       // the current pass's first chunk
	failAt int       // eval call number (1-based) that fails; 0 never
	nEval  int
}

func (f *fakeEval) reset(n int) {
	f.base = len(f.fed)
	f.pos = make([]int, n)
	f.fed = append(f.fed, make([][]int32, n)...)
	f.calls = append(f.calls, fmt.Sprintf("reset %d", n))
}

func (f *fakeEval) eval(ctx context.Context, batches []chunkBatch) error {
	f.nEval++
	if f.nEval == f.failAt {
		return errors.New("device on fire")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	call := "eval"
	for i, b := range batches {
		call += fmt.Sprintf(" %v/%d", b.tokens, b.logits)
		f.fed[f.base+i] = append(f.fed[f.base+i], b.tokens...)
		for r := len(b.tokens) - b.logits; r < len(b.tokens); r++ {
			for v := range f.nVocab {
				b.out[(r-len(b.tokens)+b.logits)*f.nVocab+v] = f.logit(f.pos[i]+r, b.tokens[r], v)
			}
		}
		f.pos[i] += len(b.tokens)
	}
	f.calls = append(f.calls, call)
	return nil
}

// fakeRun scores tokens with opts over f, as PerplexityOfTokens does over a model.
func fakeRun(ctx context.Context, f *fakeEval, tokens []int32, opts PerplexityOptions, addBOS bool, progress func(ChunkResult)) (PerplexityResult, error) {
	c, err := PlanChunks(len(tokens), opts)
	if err != nil {
		return PerplexityResult{}, err
	}
	r := chunkRunner{ev: f, c: c, nVocab: f.nVocab, bos: 1, addBOS: addBOS, workers: 3}
	return r.perplexity(ctx, tokens, progress)
}

// TestPerplexityByHand checks the arithmetic on a case small enough to do on paper:
// two chunks of 4 tokens, vocabulary 2, logits [0, ln 3] everywhere, so p(1) = 3/4 and
// p(0) = 1/4. Only position 2 of each chunk is scored: it predicts token 3, which is 1
// in chunk 1 and 0 in chunk 2.
func TestPerplexityByHand(t *testing.T) {
	f := &fakeEval{nVocab: 2, logit: func(_ int, _ int32, v int) float32 { return float32(v) * float32(math.Log(3)) }}
	tokens := []int32{1, 0, 0, 1, 0, 1, 1, 0, 1}
	res, err := fakeRun(context.Background(), f, tokens, PerplexityOptions{Ctx: 4}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := math.Log(4.0/3), math.Log(4) // the two NLLs
	want := []float64{4.0 / 3, math.Sqrt(16.0 / 3)}
	if len(res.Chunks) != 2 {
		t.Fatalf("%d chunks, want 2", len(res.Chunks))
	}
	for i, c := range res.Chunks {
		if math.Abs(c.PPL-want[i]) > 1e-6 {
			t.Errorf("chunk %d: PPL %v, want %v", i+1, c.PPL, want[i])
		}
	}
	if math.Abs(res.MeanNLL-(a+b)/2) > 1e-7 || res.Scored != 2 || res.TextTokens != 9 {
		t.Errorf("mean NLL %v over %d of %d tokens, want %v over 2 of 9", res.MeanNLL, res.Scored, res.TextTokens, (a+b)/2)
	}
	// variance ((a-b)/2)², one degree of freedom: +/- = |a-b|/2 · PPL = ln(3)/2 · sqrt(16/3)
	if wantPM := math.Log(3) / 2 * math.Sqrt(16.0/3); math.Abs(res.Uncertainty-wantPM) > 1e-6 {
		t.Errorf("uncertainty %v, want %v", res.Uncertainty, wantPM)
	}
	if got := fmt.Sprintf("[1]%.4f,[2]%.4f,", res.Chunks[0].PPL, res.Chunks[1].PPL); got != "[1]1.3333,[2]2.3094," {
		t.Errorf("running values print as %s", got)
	}
}

// TestPerplexityBatches checks the chunking, the BOS substitution, the batch cuts and
// which logits rows are scored, against a float64 recomputation.
func TestPerplexityBatches(t *testing.T) {
	logit := func(pos int, tok int32, v int) float32 {
		return float32(math.Sin(float64(pos*7+int(tok)*3+v*v)) * 4)
	}
	tokens := make([]int32, 37)
	for i := range tokens {
		tokens[i] = int32((i*5 + 2) % 6)
	}
	tests := []struct {
		name      string
		opts      PerplexityOptions
		addBOS    bool
		wantCalls []string
		wantChunk int
	}{
		{"one batch", PerplexityOptions{Ctx: 8}, true, []string{
			"reset 1", "eval [1 1 0 5 4 3 2 1]/4",
			"reset 1", "eval [1 5 4 3 2 1 0 5]/4",
			"reset 1", "eval [1 3 2 1 0 5 4 3]/4",
			"reset 1", "eval [1 1 0 5 4 3 2 1]/4"}, 4},
		{"batches of 3", PerplexityOptions{Ctx: 8, Batch: 3, Chunks: 2}, true, []string{
			"reset 1", "eval [1 1 0]/0", "eval [5 4 3]/2", "eval [2 1]/2",
			"reset 1", "eval [1 5 4]/0", "eval [3 2 1]/2", "eval [0 5]/2"}, 2},
		{"batch of 4 ends before first scored", PerplexityOptions{Ctx: 8, Batch: 4, Chunks: 1}, true, []string{
			"reset 1", "eval [1 1 0 5]/0", "eval [4 3 2 1]/4"}, 1},
		{"no BOS vocab", PerplexityOptions{Ctx: 8, Batch: 8, Chunks: 2}, false, []string{
			"reset 1", "eval [2 1 0 5 4 3 2 1]/4",
			"reset 1", "eval [0 5 4 3 2 1 0 5]/4"}, 2},
		{"two chunks per pass", PerplexityOptions{Ctx: 8, Batch: 16}, true, []string{
			"reset 2", "eval [1 1 0 5 4 3 2 1]/4 [1 5 4 3 2 1 0 5]/4",
			"reset 2", "eval [1 3 2 1 0 5 4 3]/4 [1 1 0 5 4 3 2 1]/4"}, 4},
		{"n_seq 8 over 4 chunks", PerplexityOptions{Ctx: 8, Batch: 64}, true, []string{
			"reset 4", "eval [1 1 0 5 4 3 2 1]/4 [1 5 4 3 2 1 0 5]/4 [1 3 2 1 0 5 4 3]/4 [1 1 0 5 4 3 2 1]/4"}, 4},
		{"batch 26: three chunks a pass, then one", PerplexityOptions{Ctx: 8, Batch: 26}, true, []string{
			"reset 3", "eval [1 1 0 5 4 3 2 1]/4 [1 5 4 3 2 1 0 5]/4 [1 3 2 1 0 5 4 3]/4",
			"reset 1", "eval [1 1 0 5 4 3 2 1]/4"}, 4},
		{"chunks above available", PerplexityOptions{Ctx: 16, Chunks: 9}, true, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEval{nVocab: 6, logit: logit}
			var progress []ChunkResult
			res, err := fakeRun(context.Background(), f, tokens, tt.opts, tt.addBOS, func(c ChunkResult) { progress = append(progress, c) })
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCalls != nil && !slices.Equal(f.calls, tt.wantCalls) {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(tt.wantCalls, "\n"))
			}
			if len(res.Chunks) != tt.wantChunk || !slices.Equal(progress, res.Chunks) {
				t.Fatalf("%d chunks (%d reported), want %d", len(res.Chunks), len(progress), tt.wantChunk)
			}
			checkAgainstFloat64(t, res, tokens, f.fed, logit, tt.opts.Ctx)
		})
	}
}

// checkAgainstFloat64 recomputes the running perplexity in plain float64 (agreeing to float32 rounding of
// logit differences, 1e-6) from what the
// fake was fed.
func checkAgainstFloat64(t *testing.T, res PerplexityResult, tokens []int32, fed [][]int32, logit func(int, int32, int) float32, nCtx int) {
	t.Helper()
	var sum float64
	n := 0
	for k, c := range res.Chunks {
		for p := nCtx / 2; p < nCtx-1; p++ {
			var z float64
			for v := range 6 {
				z += math.Exp(float64(logit(p, fed[k][p], v)))
			}
			target := tokens[k*nCtx+p+1]
			sum += math.Log(z) - float64(logit(p, fed[k][p], int(target)))
			n++
		}
		if want := math.Exp(sum / float64(n)); math.Abs(c.PPL-want) > 1e-6*want || c.Scored != n {
			t.Errorf("chunk %d: PPL %.12g over %d, want %.12g over %d", k+1, c.PPL, c.Scored, want, n)
		}
	}
}

func TestPerplexityErrors(t *testing.T) {
	tokens := make([]int32, 20)
	tests := []struct {
		name   string
		opts   PerplexityOptions
		failAt int
		cancel bool
		want   string
	}{
		{"text too short", PerplexityOptions{Ctx: 16}, 0, false, "need at least 32 tokens"},
		{"default ctx 512", PerplexityOptions{}, 0, false, "need at least 1024 tokens"},
		{"tiny ctx", PerplexityOptions{Ctx: 2}, 0, false, "need at least 4"},
		{"negative batch", PerplexityOptions{Ctx: 4, Batch: -1}, 0, false, "negative batch"},
		{"eval fails", PerplexityOptions{Ctx: 4}, 3, false, "chunk 3: eval tokens 0..3: device on fire"},
		{"cancelled", PerplexityOptions{Ctx: 4}, 0, true, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEval{nVocab: 2, logit: func(int, int32, int) float32 { return 0 }, failAt: tt.failAt}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			_, err := fakeRun(ctx, f, tokens, tt.opts, true, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v is not context.Canceled", err)
			}
		})
	}
}

// TestNLLOf checks the log-softmax against float64 and its float32 max/exp handling on
// large logits, where a naive float32 sum would overflow.
func TestNLLOf(t *testing.T) {
	tests := []struct {
		row  []float32
		tok  int32
		want float64
	}{
		{[]float32{0, 0, 0, 0}, 2, math.Log(4)},
		{[]float32{0, float32(math.Log(3))}, 1, math.Log(4.0 / 3)},
		{[]float32{1000, 1000}, 0, math.Log(2)},
		{[]float32{-1e4, 0}, 0, 1e4},
	}
	for _, tt := range tests {
		if got := nllOf(tt.row, tt.tok); math.Abs(got-tt.want) > 1e-6*max(1, tt.want) {
			t.Errorf("nllOf(%v, %d) = %v, want %v", tt.row, tt.tok, got, tt.want)
		}
	}
}

// loadText reads the perplexity corpus, skipping when it is absent.
func loadText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testdata.Path(t, "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refModel returns reference.json's entry for file.
func refModel(t *testing.T, ref *testdata.Reference, file string) testdata.Model {
	t.Helper()
	for _, m := range ref.Models {
		if m.File == file {
			return m
		}
	}
	t.Fatalf("reference.json has no %s", file)
	return testdata.Model{}
}

// pplRun loads file with kv and scores text as llama-perplexity -c 128 -b batch
// --chunks 20. When firstIDs is not nil, text must tokenize to ids starting with them.
func pplRun(t *testing.T, file, text string, kv tensor.DType, batch int, firstIDs []int32) PerplexityResult {
	return pplRunUB(t, file, text, kv, batch, 0, firstIDs)
}

// pplRunUB is pplRun in micro-batches of ub tokens (0 = the model's).
func pplRunUB(t *testing.T, file, text string, kv tensor.DType, batch, ub int, firstIDs []int32) PerplexityResult {
	t.Helper()
	m, err := Load(testdata.Path(t, file), Options{ContextSize: 128, BatchSize: batch, KVType: kvOf(kv)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ids := m.Tokenizer().Encode(text, true); firstIDs != nil && (len(ids) < len(firstIDs) || !slices.Equal(ids[:len(firstIDs)], firstIDs)) {
		t.Fatalf("the text's first %d tokens differ from llama.cpp's tokenization of the corpus", len(firstIDs))
	}
	res, err := Perplexity(context.Background(), m, text, PerplexityOptions{Ctx: 128, Batch: batch, Chunks: 20, MicroBatch: ub}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkPPL compares a run with a llama-perplexity reference: the final value within
// tol and every running value within runTol (relative).
func checkPPL(t *testing.T, res PerplexityResult, ref testdata.Perplexity, tol, runTol float64) {
	t.Helper()
	if len(res.Chunks) != len(ref.Running) || res.Scored != 63*len(ref.Running) {
		t.Fatalf("%d chunks, %d scored; want %d chunks, %d scored", len(res.Chunks), res.Scored, len(ref.Running), 63*len(ref.Running))
	}
	if d := math.Abs(res.PPL/ref.FinalPPL - 1); d > tol {
		t.Errorf("final PPL %.4f +/- %.5f, llama.cpp %.4f +/- %.5f (%.4f%% off, tolerance %.3g%%)",
			res.PPL, res.Uncertainty, ref.FinalPPL, ref.FinalPM, 100*d, 100*tol)
	}
	if d := math.Abs(res.Uncertainty/ref.FinalPM - 1); d > 10*tol {
		t.Errorf("+/- %.5f, llama.cpp %.5f", res.Uncertainty, ref.FinalPM)
	}
	worst := 0.0
	for i, c := range res.Chunks {
		d := math.Abs(c.PPL/ref.Running[i] - 1)
		if d > runTol {
			t.Errorf("[%d]%.4f, llama.cpp [%d]%.4f (%.4f%% off)", i+1, c.PPL, i+1, ref.Running[i], 100*d)
		}
		worst = max(worst, d)
	}
	t.Logf("PPL %.4f +/- %.5f, llama.cpp %.4f +/- %.5f (%+.4f%%); running values at most %.4f%% off",
		res.PPL, res.Uncertainty, ref.FinalPPL, ref.FinalPM, 100*(res.PPL/ref.FinalPPL-1), 100*worst)
}

// TestPerplexityStories260K scores tinyshakespeare with stories260K-F32 as the
// reference runs did: within 0.01% of llama.cpp with an F32 KV cache (flash attention
// off), also when each chunk is evaluated in batches of 48, 48 and 32 tokens, and
// within 0.1% with the default F16 cache.
func TestPerplexityStories260K(t *testing.T) {
	ref := testdata.LoadReference(t)
	text := loadText(t)
	want := refModel(t, ref, "stories260K-F32.gguf")
	t.Run("kv f32", func(t *testing.T) {
		checkPPL(t, pplRun(t, want.File, text, tensor.F32, 128, nil), want.PerplexityKVF32NoFA[0], 1e-4, 1e-4)
	})
	t.Run("kv f32 batch 48", func(t *testing.T) {
		checkPPL(t, pplRun(t, want.File, text, tensor.F32, 48, nil), want.PerplexityKVF32NoFA[0], 1e-4, 1e-4)
	})
	t.Run("kv f16", func(t *testing.T) {
		checkPPL(t, pplRun(t, want.File, text, tensor.F16, 128, nil), want.Perplexity[0], 1e-3, 1e-3)
	})
	t.Run("kv f16 four chunks per pass", func(t *testing.T) {
		res := pplRunUB(t, want.File, text, tensor.F16, 512, 512, nil)
		if res.Chunking.Seq != 4 {
			t.Errorf("n_seq %d, want 4", res.Chunking.Seq)
		}
		checkPPL(t, res, want.Perplexity[0], 1e-3, 1e-3)
	})
}

// TestPerplexityPacked checks that packing chunks into passes (-b 512 -c 128: n_seq 4,
// in one micro-batch of 512 rows or in four of 128) gives the one-chunk-per-pass
// values: every running value and the final estimate within 1e-5 (on the CPU they are
// the same to the last bit, since each chunk's rows go through the same kernels).
func TestPerplexityPacked(t *testing.T) {
	text := loadText(t)
	for _, file := range []string{"stories260K-F32.gguf", "stories260K-Q4_0.gguf"} {
		t.Run(file, func(t *testing.T) {
			want := pplRun(t, file, text, tensor.F16, 128, nil)
			for _, ub := range []int{512, 128} {
				got := pplRunUB(t, file, text, tensor.F16, 512, ub, nil)
				if len(got.Chunks) != len(want.Chunks) || got.Chunking.Seq != 4 || want.Chunking.Seq != 1 {
					t.Fatalf("ub %d: %d chunks with n_seq %d, want %d with n_seq 1 for -b 128", ub, len(got.Chunks), got.Chunking.Seq, len(want.Chunks))
				}
				for i, c := range got.Chunks {
					if w := want.Chunks[i]; math.Abs(c.PPL/w.PPL-1) > 1e-5 || c.Chunk != w.Chunk || c.Start != w.Start {
						t.Errorf("ub %d: chunk %d (start %d): running PPL %.10g, one chunk per pass %.10g", ub, c.Chunk, c.Start, c.PPL, w.PPL)
					}
				}
				if d := math.Abs(got.PPL/want.PPL - 1); d > 1e-5 || math.Abs(got.Uncertainty/want.Uncertainty-1) > 1e-5 {
					t.Errorf("ub %d: PPL %.10g +/- %.10g, one chunk per pass %.10g +/- %.10g", ub, got.PPL, got.Uncertainty, want.PPL, want.Uncertainty)
				}
				t.Logf("ub %d: PPL %.10g, one chunk per pass %.10g (bit-identical: %v)", ub, got.PPL, want.PPL, got.PPL == want.PPL)
			}
		})
	}
}

// sweep turns on the whole of TestPerplexityAllModels (about two minutes on 2 cores).
var sweep = flag.Bool("sweep", false, "TestPerplexityAllModels: score every model in reference.json")

// TestPerplexityAllModels checks the models in reference.json with an F32 KV cache:
// final perplexity of F32, F16 and BF16 weights within 0.01% of llama.cpp, of quantized
// weights within 0.1% (running values within 1%). Only the corpus' first 2560 tokens
// are used, so each model tokenizes a prefix of it (checked against the reference
// tokenization). By default the stories260K files and llama-2-tiny-random run; -short
// keeps stories260K only; -sweep adds the 13 synth-256 files (about 100 s more).
func TestPerplexityAllModels(t *testing.T) {
	ref := testdata.LoadReference(t)
	text := loadText(t)
	for _, want := range ref.Models {
		t.Run(want.File, func(t *testing.T) {
			stories := strings.HasPrefix(want.File, "stories260K")
			switch {
			case *sweep:
			case testing.Short() && !stories:
				t.Skip("-short: stories260K only")
			case !stories && want.File != "llama-2-tiny-random.gguf":
				t.Skip("run with -sweep")
			}
			if len(want.PerplexityKVF32NoFA) == 0 {
				t.Skip("no F32-cache reference")
			}
			tol := 1e-3
			if strings.HasSuffix(want.File, "-F32.gguf") || strings.HasSuffix(want.File, "-F16.gguf") || strings.HasSuffix(want.File, "-BF16.gguf") {
				tol = 1e-4
			}
			prefix, ids := corpusPrefix(t, ref, want.File, text)
			checkPPL(t, pplRun(t, want.File, prefix, tensor.F32, 128, ids), want.PerplexityKVF32NoFA[0], tol, 1e-2)
		})
	}
}

// corpusPrefix returns the start of the corpus (cut at a newline after 20000 bytes,
// over 2560 tokens with either vocabulary) and the reference's first 2560 ids of the
// whole corpus with file's vocabulary.
func corpusPrefix(t *testing.T, ref *testdata.Reference, file, text string) (string, []int32) {
	t.Helper()
	key := "tok512"
	if strings.HasPrefix(file, "llama-2") {
		key = "llama2_32k"
	}
	if len(ref.Corpus) == 0 || len(ref.Corpus[0].Tokenizations[key].FirstIDs) != 2560 {
		t.Fatalf("reference.json: no %s tokenization of the corpus", key)
	}
	cut := 20000 + strings.IndexByte(text[20000:], '\n')
	return text[:cut], ref.Corpus[0].Tokenizations[key].FirstIDs
}

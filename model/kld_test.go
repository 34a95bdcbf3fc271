package model

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

// llamaKLD is what the tests read from llama.cpp's --kl-divergence output.
type llamaKLD struct {
	meanPPL, meanKLD, medianKLD, sameTop float64
	chunks                               int
}

// readLlamaKLD parses kld/<name>.kld.txt.
func readLlamaKLD(t *testing.T, name string) llamaKLD {
	t.Helper()
	b, err := os.ReadFile(testdata.Path(t, filepath.Join("kld", name+".kld.txt")))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	num := func(re string) float64 {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%s.kld.txt: no match for %s", name, re)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return llamaKLD{
		meanPPL:   num(`Mean PPL\(Q\)\s+:\s+([0-9.]+)`),
		meanKLD:   num(`Mean    KLD:\s+([0-9.]+)`),
		medianKLD: num(`Median  KLD:\s+([0-9.]+)`),
		sameTop:   num(`Same top p:\s+([0-9.]+)`),
		chunks:    len(regexp.MustCompile(`(?m)^\s+\d+\s+\d+\.\d{4} ±`).FindAllString(s, -1)),
	}
}

// kldRun compares file (with llama.cpp's default F16 KV cache) with the base file at
// base, in passes of batch tokens.
func kldRun(t *testing.T, file, base string, batch int) KLDResult {
	t.Helper()
	m, err := Load(testdata.Path(t, file), Options{ContextSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := KLDivergence(context.Background(), m, base, PerplexityOptions{Batch: batch, MicroBatch: batch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestKLDAgainstLlama compares --kl-divergence of stories260K-Q4_0 and
// synth-256-Q4_K_M against llama.cpp's base files with llama.cpp's printed results:
// Mean KLD within 2%, Mean PPL(Q) within 0.1%, Median KLD within 5%, Same top p within
// one point; also with four chunks per pass.
func TestKLDAgainstLlama(t *testing.T) {
	for _, tt := range []struct{ base, quant string }{
		{"stories260K-F32", "stories260K-Q4_0"},
		{"synth-256-F32", "synth-256-Q4_K_M"},
	} {
		t.Run(tt.quant, func(t *testing.T) {
			want := readLlamaKLD(t, tt.quant)
			base := testdata.Path(t, filepath.Join("kld", tt.base+".kld"))
			for _, batch := range []int{128, 512} {
				res := kldRun(t, tt.quant+".gguf", base, batch)
				s := res.Stats
				if len(res.Chunks) != want.chunks || s.Tokens != 63*want.chunks {
					t.Fatalf("-b %d: %d chunks, %d tokens; llama.cpp %d chunks", batch, len(res.Chunks), s.Tokens, want.chunks)
				}
				checks := []struct {
					name      string
					got, want float64
					tol       float64
					relative  bool
				}{
					{"Mean KLD", s.KLD, want.meanKLD, 0.02, true},
					{"Mean PPL(Q)", s.PPL, want.meanPPL, 0.001, true},
					{"Median KLD", s.KLDPercentiles[5].Value, want.medianKLD, 0.05, true},
					{"Same top p", 100 * s.SameTop, want.sameTop, 1, false},
				}
				for _, c := range checks {
					d := math.Abs(c.got - c.want)
					if c.relative {
						d /= c.want
					}
					if d > c.tol {
						t.Errorf("-b %d: %s %.6f, llama.cpp %.6f", batch, c.name, c.got, c.want)
					}
				}
				t.Logf("-b %d: Mean KLD %.6f (llama.cpp %.6f), Mean PPL(Q) %.6f (%.6f), Median KLD %.6f (%.6f), Same top p %.3f%% (%.3f%%)",
					batch, s.KLD, want.meanKLD, s.PPL, want.meanPPL, s.KLDPercentiles[5].Value, want.medianKLD, 100*s.SameTop, want.sameTop)
				if last := res.Chunks[len(res.Chunks)-1]; last.KLD != s.KLD || last.PPL != s.PPL {
					t.Errorf("-b %d: last chunk's running KLD %v, PPL %v differ from the final %v, %v", batch, last.KLD, last.PPL, s.KLD, s.PPL)
				}
			}
		})
	}
}

// TestKLDBaseFile writes base files as llama.cpp's were written (-c 128 --chunks 20,
// F16 KV cache; here in passes of four chunks) and compares them with llama.cpp's:
// header and tokens byte for byte, every record's scale and minimum within 1e-3 and
// every log-probability within 1e-3 plus one quantization step.
//
// That holds for synth-256-F32, whose F16-cache logits are bit-identical to
// llama.cpp's. It does not hold for stories260K-F32 (3.2% of the values beyond 1e-3,
// at most 1.07e-2). Its logits already differ in row 0 (2.9e-6, 65 of 512 bit-equal),
// where attention returns V exactly, so the difference lies in the per-token chain
// (rms_norm, the F32 matmuls with k = 64, SwiGLU's scalar tail, ffn_down's 172-long
// dots), the parts of it that synth-256 does not exercise being the last two; no order
// of those built from ggml's sources reproduces llama.cpp's row 0 (f32order-results.md).
// The quantized stories files cannot tell: each of their matmuls re-quantizes its
// input, which hides such ulps. With head size 8 the F16 keys, queries and V sum of the
// flash attention then amplify the ulps: two of our own base files differing only in
// how the last 12 products of ffn_down's dots are rounded differ from each other in
// 2.3% of the values, as much as either does from llama.cpp's (harden-results.md). So
// its log-probabilities are only logged, and its header, tokens and scales checked.
// Comparing a model with its own base file gives a KL divergence of (nearly) zero.
func TestKLDBaseFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		exact bool // the log-probabilities are checked
	}{{"synth-256-F32", true}, {"stories260K-F32", false}} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := os.ReadFile(testdata.Path(t, "kld/"+tt.name+".kld"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Load(testdata.Path(t, tt.name+".gguf"), Options{ContextSize: 128})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			tokens := m.Tokenizer().Encode(loadText(t), true)
			path := filepath.Join(t.TempDir(), "base.kld")
			res, err := WriteKLDBase(context.Background(), m, tokens, path, PerplexityOptions{Ctx: 128, Batch: 512, Chunks: 20, MicroBatch: 512}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			compareBase(t, got, want, tt.exact)
			t.Logf("PPL %.4f", res.PPL)
			self := kldRun(t, tt.name+".gguf", path, 128).Stats
			if math.Abs(self.KLD) > 1e-6 || self.SameTop < 0.999 || math.Abs(self.PPL/res.PPL-1) > 1e-6 {
				t.Errorf("against its own base: KLD %g, same top %.4f, PPL %.6f (written with %.6f)", self.KLD, self.SameTop, self.PPL, res.PPL)
			}
		})
	}
}

// compareBase compares a base file of 20 chunks of 128 tokens with llama.cpp's:
// header and tokens byte for byte, scales within 1e-3, and when exact the minimum and
// every log-probability within 1e-3 (plus one quantization step).
func compareBase(t *testing.T, got, want []byte, exact bool) {
	t.Helper()
	h, err := readKLDHeader(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d bytes, llama.cpp's %d", len(got), len(want))
	}
	head := len(kldMagic) + 12 + 4*len(h.Tokens)
	if !bytes.Equal(got[:head], want[:head]) {
		t.Fatal("header or tokens differ from llama.cpp's")
	}
	rb := recordBytes(h.Vocab)
	le := binary.LittleEndian
	worst, sum, over, n := 0.0, 0.0, 0, 0
	for r := head; r < len(got); r += rb {
		a, b := got[r:r+rb], want[r:r+rb]
		sa, sb := math.Float32frombits(le.Uint32(a)), math.Float32frombits(le.Uint32(b))
		ma, mb := math.Float32frombits(le.Uint32(a[4:])), math.Float32frombits(le.Uint32(b[4:]))
		if math.Abs(float64(sa-sb)) > 1e-3 || exact && math.Abs(float64(ma-mb)) > 1e-3 {
			t.Fatalf("record %d: scale %g, min %g; llama.cpp %g, %g", (r-head)/rb, sa, ma, sb, mb)
		}
		for i := range h.Vocab {
			d := math.Abs(float64(logProb(a, i) - logProb(b, i)))
			if d > 1e-3+float64(max(sa, sb)) {
				over++
				if exact {
					t.Fatalf("record %d, token %d: log-probability %g, llama.cpp %g", (r-head)/rb, i, logProb(a, i), logProb(b, i))
				}
			}
			worst, sum, n = max(worst, d), sum+d, n+1
		}
	}
	t.Logf("log-probabilities: at most %.3g from llama.cpp's, mean %.3g; %d of %d beyond 1e-3 plus a step", worst, sum/float64(n), over, n)
}

// TestKLDBaseCancelled cancels a base file's writing after its first chunk: the error
// is the context's and neither the file nor its temporary copy remains.
func TestKLDBaseCancelled(t *testing.T) {
	m, err := Load(testdata.Path(t, "stories260K-F32.gguf"), Options{ContextSize: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tokens := m.Tokenizer().Encode(loadText(t)[:20000], true)
	dir := t.TempDir()
	path := filepath.Join(dir, "base.kld")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = WriteKLDBase(ctx, m, tokens, path, PerplexityOptions{Ctx: 64, Batch: 64}, func(ChunkResult) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestKLDBaseErrors checks that bad base files are refused with one clear error.
func TestKLDBaseErrors(t *testing.T) {
	good, err := os.ReadFile(testdata.Path(t, "kld/stories260K-F32.kld"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(testdata.Path(t, "synth-256-Q8_0.gguf"), Options{ContextSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := t.TempDir()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "header: unexpected EOF"},
		{"magic", append([]byte("_logitz_"), good[8:]...), "no _logits_ magic"},
		{"truncated", good[:len(good)-7], "1310573 bytes, want 1310580"},
		{"tokens cut", good[:100], "tokens: unexpected EOF"},
		{"zero chunks", append(append([]byte{}, good[:16]...), 0, 0, 0, 0), "n_chunk 0"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".kld")
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := KLDivergence(context.Background(), m, path, PerplexityOptions{}, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tt.name, err, tt.want)
		}
	}
	// A base file of a 512-token vocabulary against a model of another is refused.
	other, err := Load(testdata.Path(t, "llama-2-tiny-random.gguf"), Options{ContextSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := KLDivergence(context.Background(), other, testdata.Path(t, "kld/stories260K-F32.kld"), PerplexityOptions{}, nil); err == nil || !strings.Contains(err.Error(), "vocabulary of 512 tokens, the model's has 32000") {
		t.Errorf("vocabulary mismatch: %v", err)
	}
}

// TestPercentiles checks llama.cpp's percentile (type 7) through gonum's quantile.
func TestPercentiles(t *testing.T) {
	x := []float64{4, 1, 3, 2, 10}
	got := percentilesOf(x, []float64{1, 0.75, 0.5, 0.1, 0})
	want := []float64{10, 4, 3, 1.4, 1} // sorted 1 2 3 4 10: rank f·4
	for i, p := range got {
		if math.Abs(p.Value-want[i]) > 1e-12 {
			t.Errorf("percentile %g = %g, want %g", p.P, p.Value, want[i])
		}
	}
	if even := percentilesOf([]float64{1, 2, 3, 4}, []float64{0.5}); even[0].Value != 2.5 {
		t.Errorf("median of 1 2 3 4 = %g, want 2.5", even[0].Value)
	}
	m, u := meanUnc([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	if m != 6 || math.Abs(u-math.Sqrt(11.0/11)) > 1e-12 { // sample variance 11, n 11
		t.Errorf("meanUnc = %g ± %g, want 6 ± 1", m, u)
	}
	if _, u := meanUnc([]float64{1, 2, 3}); u != 0 {
		t.Errorf("uncertainty of 3 values %g, want 0 (llama.cpp needs more than 10)", u)
	}
}

package model

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// logitsOf returns logits whose softmax is probs (up to a constant).
func logitsOf(probs ...float64) []float32 {
	l := make([]float32, len(probs))
	for i, p := range probs {
		l[i] = float32(math.Log(p))
	}
	return l
}

func TestSamplerCandidates(t *testing.T) {
	tests := []struct {
		name    string
		opts    SamplerOptions
		logits  []float32
		history []int32
		want    []int32   // surviving ids, most likely first when sorted
		wantP   []float32 // their probabilities, nil to skip
	}{
		{"greedy argmax", SamplerOptions{}, []float32{1, 3, 2}, nil, []int32{1}, []float32{1}},
		{"greedy tie lowest id", SamplerOptions{}, []float32{1, 3, 3, 0}, nil, []int32{1}, nil},
		{"greedy negative temp", SamplerOptions{Temp: -1}, []float32{-5, -4, -6}, nil, []int32{1}, nil},
		{"greedy penalised", SamplerOptions{RepeatPenalty: 2, RepeatLastN: 4}, []float32{1, 3, 2}, []int32{1}, []int32{2}, nil},
		{"penalty window excludes old", SamplerOptions{RepeatPenalty: 2, RepeatLastN: 1}, []float32{1, 3, 2}, []int32{1, 0}, []int32{1}, nil},
		{"negative logit penalised by multiply", SamplerOptions{RepeatPenalty: 2, RepeatLastN: 8}, []float32{-1, -1.5}, []int32{0}, []int32{1}, nil},
		{"temp only keeps all", SamplerOptions{Temp: 1}, logitsOf(0.5, 0.3, 0.2), nil,
			[]int32{0, 1, 2}, []float32{0.5, 0.3, 0.2}},
		{"temp 0.5 sharpens", SamplerOptions{Temp: 0.5}, logitsOf(0.6, 0.4), nil,
			[]int32{0, 1}, []float32{0.36 / 0.52, 0.16 / 0.52}},
		{"top-k 2", SamplerOptions{Temp: 1, TopK: 2}, logitsOf(0.2, 0.5, 0.3), nil,
			[]int32{1, 2}, []float32{0.625, 0.375}},
		{"top-k larger than vocab", SamplerOptions{Temp: 1, TopK: 10}, logitsOf(0.2, 0.5, 0.3), nil,
			[]int32{1, 2, 0}, nil},
		{"top-k ties lowest id", SamplerOptions{Temp: 1, TopK: 1}, []float32{0, 2, 2}, nil, []int32{1}, []float32{1}},
		{"top-p 0.7", SamplerOptions{Temp: 1, TopP: 0.7}, logitsOf(0.2, 0.5, 0.3), nil,
			[]int32{1, 2}, []float32{0.625, 0.375}},
		{"top-p reached exactly", SamplerOptions{Temp: 1, TopP: 0.5}, logitsOf(0.25, 0.5, 0.25), nil,
			[]int32{1}, []float32{1}},
		{"top-p 1 is off", SamplerOptions{Temp: 1, TopP: 1}, logitsOf(0.2, 0.5, 0.3), nil,
			[]int32{0, 1, 2}, nil},
		{"min-p 0.5", SamplerOptions{Temp: 1, MinP: 0.5}, logitsOf(0.2, 0.5, 0.3), nil,
			[]int32{1, 2}, []float32{0.625, 0.375}},
		{"min-p keeps boundary", SamplerOptions{Temp: 1, MinP: 0.25}, []float32{0, float32(math.Log(4)), 0.5}, nil,
			[]int32{0, 1, 2}, nil},
		{"penalty then top-k", SamplerOptions{Temp: 1, TopK: 1, RepeatPenalty: 4, RepeatLastN: 64}, []float32{1, 3, 2}, []int32{1, 1}, []int32{2}, nil},
		{"defaults", DefaultSamplerOptions(), logitsOf(0.9, 0.04, 0.03, 0.02, 0.01), nil,
			[]int32{0}, []float32{1}}, // top-p 0.95 keeps 0, 1, 2; min-p 0.05 then cuts 0.04 < 0.045
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSampler(tt.opts, nil)
			in := slices.Clone(tt.logits)
			cand := s.candidates(tt.logits, tt.history)
			if !slices.Equal(tt.logits, in) {
				t.Errorf("logits modified: %v, were %v", tt.logits, in)
			}
			var ids []int32
			var sum float32
			for _, c := range cand {
				ids = append(ids, c.id)
				sum += c.p
			}
			if !sameSet(ids, tt.want) {
				t.Fatalf("candidates %v, want %v", ids, tt.want)
			}
			if math.Abs(float64(sum)-1) > 1e-6 {
				t.Errorf("probabilities sum to %v", sum)
			}
			for i, p := range tt.wantP {
				if c := find(cand, tt.want[i]); math.Abs(float64(c.p-p)) > 1e-5 {
					t.Errorf("p(%d) = %v, want %v", tt.want[i], c.p, p)
				}
			}
		})
	}
}

func sameSet(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func find(cand []candidate, id int32) candidate {
	for _, c := range cand {
		if c.id == id {
			return c
		}
	}
	return candidate{id: -1, p: float32(math.NaN())}
}

// TestSamplerDraws checks that draws follow the filtered distribution and that a seed
// fixes the sequence.
func TestSamplerDraws(t *testing.T) {
	logits := logitsOf(0.1, 0.6, 0.3, 1e-9)
	opts := SamplerOptions{Temp: 1, Seed: 7}
	const n = 20000
	counts := make([]int, len(logits))
	s := NewSampler(opts, nil)
	var seq []int32
	for range n {
		id := s.Sample(logits, nil)
		counts[id]++
		seq = append(seq, id)
	}
	for id, want := range []float64{0.1, 0.6, 0.3, 0} {
		got := float64(counts[id]) / n
		if math.Abs(got-want) > 0.015 {
			t.Errorf("token %d drawn %.4f of the time, want %.2f", id, got, want)
		}
	}
	again := NewSampler(opts, rand.New(rand.NewPCG(7, 7)))
	for i, want := range seq[:100] {
		if got := again.Sample(logits, nil); got != want {
			t.Fatalf("draw %d with the same seed = %d, want %d", i, got, want)
		}
	}
	other := NewSampler(SamplerOptions{Temp: 1, Seed: 8}, nil)
	same := 0
	for _, want := range seq[:100] {
		if other.Sample(logits, nil) == want {
			same++
		}
	}
	if same == 100 {
		t.Error("seed 8 drew the same 100 tokens as seed 7")
	}
}

func TestSamplerGreedyIgnoresRand(t *testing.T) {
	s := NewSampler(SamplerOptions{}, rand.New(rand.NewPCG(1, 2)))
	logits := []float32{0.1, 0.2, 5, 0.3}
	for range 10 {
		if got := s.Sample(logits, nil); got != 2 {
			t.Fatalf("greedy Sample = %d, want 2", got)
		}
	}
}

// randomLogits returns n logits drawn from N(0, 3²) and rounded to 1/64, so that some
// tie, with a few -Inf (tokens a model rules out).
func randomLogits(rng *rand.Rand, n int) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(math.Round(rng.NormFloat64()*3*64) / 64)
	}
	for range n / 100 {
		l[rng.IntN(n)] = float32(math.Inf(-1))
	}
	return l
}

// TestSamplerMatchesReference checks that the fast chain (heap top-k, incremental
// top-p, one-pass min-p) keeps the candidates that sorting the whole vocabulary keeps,
// in the same order and with the same probabilities, so a seed draws the same tokens.
func TestSamplerMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	history := []int32{5, 17, 17, 250, 999, 1999, 3, 40000, -1} // out-of-range ids are ignored
	configs := []SamplerOptions{
		DefaultSamplerOptions(),
		{Temp: 1},
		{Temp: 0.7, TopK: 1},
		{Temp: 0.7, TopK: 5},
		{Temp: 0.7, TopK: 5000}, // more than the vocabulary
		{Temp: 1.3, TopP: 0.9},  // top-p over the whole vocabulary
		{Temp: 1.3, TopP: 0.999},
		{Temp: 1, MinP: 0.1}, // min-p over the whole vocabulary
		{Temp: 1, TopP: 0.5, MinP: 0.2},
		{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.3, RepeatLastN: 64},
		{Temp: 0.8, TopK: 100, RepeatPenalty: 0.7, RepeatLastN: 4},
		{RepeatPenalty: 1.5, RepeatLastN: 64}, // greedy, penalised
	}
	for trial := range 20 {
		logits := randomLogits(rng, 2000)
		if trial%5 == 0 {
			logits = logits[:1+trial] // tiny vocabularies too
		}
		for _, opts := range configs {
			s := NewSampler(opts, nil)
			in := slices.Clone(logits)
			got := slices.Clone(s.candidates(logits, history))
			if !slices.Equal(logits, in) {
				t.Fatalf("%+v: logits modified", opts)
			}
			want := refCandidates(opts, slices.Clone(logits), history)
			// Top-p over the whole vocabulary sums the softmax in id order instead of
			// sorted order; everything else is the same arithmetic.
			tol := 0.0
			if opts.TopK == 0 && opts.TopP > 0 {
				tol = 1e-6
				if len(got) != len(want) && cutNearTopP(logits, want, opts.TopP, len(got)) {
					continue
				}
			}
			if len(got) != len(want) {
				t.Fatalf("trial %d %+v: %d candidates, reference %d", trial, opts, len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.id != w.id || g.logit != w.logit || math.Abs(float64(g.p-w.p)) > tol*float64(w.p) {
					t.Fatalf("trial %d %+v: candidate %d = %+v, reference %+v", trial, opts, i, g, w)
				}
			}
		}
	}
}

// cutNearTopP reports whether top-p can cut the sorted candidates want (ids into logits,
// no penalty) after n tokens as well as after len(want): the mass of the first
// min(n, len(want)) of them, in float64 against the whole vocabulary, is within float32
// summing error (1e-5) of p.
func cutNearTopP(logits []float32, want []candidate, p float32, n int) bool {
	maxL := math.Inf(-1)
	for _, l := range logits {
		maxL = math.Max(maxL, float64(l))
	}
	var sum, mass float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - maxL)
	}
	if abs := n - len(want); abs > 1 || abs < -1 {
		return false
	}
	for _, c := range want[:min(n, len(want))] {
		mass += math.Exp(float64(logits[c.id]) - maxL)
	}
	return math.Abs(mass/sum-float64(p)) < 1e-5
}

func TestSamplerValidate(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	good := []SamplerOptions{{}, DefaultSamplerOptions(), {Temp: -1}, {Temp: 2, TopK: 1, TopP: 1, MinP: 1, RepeatPenalty: 0, RepeatLastN: 1}}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	bad := []struct {
		opts SamplerOptions
		want string
	}{
		{SamplerOptions{Temp: nan}, "temperature NaN"},
		{SamplerOptions{Temp: inf}, "temperature +Inf"},
		{SamplerOptions{TopK: -1}, "top-k -1"},
		{SamplerOptions{TopP: -1}, "top-p -1"},
		{SamplerOptions{TopP: 1.5}, "top-p 1.5"},
		{SamplerOptions{TopP: nan}, "top-p NaN"},
		{SamplerOptions{MinP: 2}, "min-p 2"},
		{SamplerOptions{MinP: nan}, "min-p NaN"},
		{SamplerOptions{MinP: -inf}, "min-p -Inf"},
		{SamplerOptions{RepeatPenalty: -1}, "repeat penalty -1"},
		{SamplerOptions{RepeatPenalty: nan}, "repeat penalty NaN"},
		{SamplerOptions{RepeatLastN: -1}, "repeat-last-n -1"},
	}
	for _, tt := range bad {
		err := tt.opts.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want an error containing %q", tt.opts, err, tt.want)
		}
		// A Sampler given them anyway never panics and returns a token of the vocabulary.
		for _, temp := range []float32{tt.opts.Temp, 1} {
			o := tt.opts
			o.Temp = temp
			s := NewSampler(o, nil)
			for _, logits := range [][]float32{{1, 2, 3}, {nan, nan}, {float32(math.Inf(-1)), 0}} {
				if id := s.Sample(logits, []int32{0, 1}); id < 0 || int(id) >= len(logits) {
					t.Errorf("%+v: Sample(%v) = %d", o, logits, id)
				}
			}
		}
	}
}

// TestSamplerMinPAboveOne is the case that used to index out of range: min-p above 1
// drops every token, and the sampler keeps the most likely one.
func TestSamplerMinPAboveOne(t *testing.T) {
	s := NewSampler(SamplerOptions{Temp: 1, MinP: 2}, nil)
	if got := s.Sample([]float32{0.1, 3, 0.2}, nil); got != 1 {
		t.Errorf("Sample = %d, want the argmax 1", got)
	}
}

// chiSquareP returns the p-value of Pearson's chi-square statistic for counts drawn
// n times against probabilities want (the regularised upper incomplete gamma function
// Q(df/2, x/2)), and an error for a draw of a token whose probability is 0.
func chiSquareP(counts []int, want []float64) (float64, error) {
	n := 0
	for _, c := range counts {
		n += c
	}
	var x float64
	df := -1
	for i, p := range want {
		if p == 0 {
			if counts[i] > 0 {
				return 0, fmt.Errorf("token %d drawn %d times, probability 0", i, counts[i])
			}
			continue
		}
		e := p * float64(n)
		x += (float64(counts[i]) - e) * (float64(counts[i]) - e) / e
		df++
	}
	return gammaQ(float64(df)/2, x/2), nil
}

// gammaQ is the regularised upper incomplete gamma function Q(a, x), by its series for
// x < a+1 and its continued fraction otherwise (Numerical Recipes' gammq).
func gammaQ(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1.0; n < 1000; n++ {
			term *= x / (a + n)
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1.0; i < 1000; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

func TestGammaQ(t *testing.T) {
	// Chi-square critical values from tables (df, x, p), and the closed forms for even df.
	for _, tt := range []struct{ df, x, p float64 }{
		{7, 14.06714, 0.05}, {7, 24.32189, 0.001}, {3, 7.814728, 0.05}, {2, 5, math.Exp(-2.5)}, {4, 1, 1.5 * math.Exp(-0.5)},
		{1, 3.841459, 0.05}, {30, 59.70306, 0.001},
	} {
		if got := gammaQ(tt.df/2, tt.x/2); math.Abs(got-tt.p) > 1e-4*tt.p+1e-6 {
			t.Errorf("chi-square df %g x %g: p %g, want %g", tt.df, tt.x, got, tt.p)
		}
	}
}

// exactChain is the sampler chain in float64 on a small vocabulary, written from
// llama.cpp's definitions: sort, top-k, top-p on the softmax at temperature 1, min-p
// against the best, then the softmax at Temp. It returns each token's probability.
func exactChain(o SamplerOptions, logits []float64) []float64 {
	ids := make([]int, len(logits))
	for i := range ids {
		ids[i] = i
	}
	slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(logits[b], logits[a]) })
	if o.TopK > 0 {
		ids = ids[:min(o.TopK, len(ids))]
	}
	probs := func(ids []int, temp float64) []float64 {
		p := make([]float64, len(ids))
		var sum float64
		for i, id := range ids {
			p[i] = math.Exp((logits[id] - logits[ids[0]]) / temp)
			sum += p[i]
		}
		for i := range p {
			p[i] /= sum
		}
		return p
	}
	if o.TopP > 0 && o.TopP < 1 {
		var cum float64
		for i, p := range probs(ids, 1) {
			if cum += p; cum >= float64(o.TopP) {
				ids = ids[:i+1]
				break
			}
		}
	}
	if o.MinP > 0 {
		kept := ids[:0]
		for _, id := range ids {
			if logits[id] >= logits[ids[0]]+math.Log(float64(o.MinP)) {
				kept = append(kept, id)
			}
		}
		ids = kept
	}
	out := make([]float64, len(logits))
	for i, p := range probs(ids, float64(o.Temp)) {
		out[ids[i]] = p
	}
	return out
}

// TestSamplerChiSquare draws 100k tokens from an 8-token vocabulary with a fixed seed
// for each chain and compares the counts with the exact distribution (exactChain) by
// Pearson's chi-square test: the test fails when p < 0.001. The logits keep every cut
// far from its threshold, so float32 rounding cannot move it. As a check of the test's
// power, the counts must also reject the distribution of a slightly different
// temperature (p < 1e-6).
func TestSamplerChiSquare(t *testing.T) {
	logits := []float64{2.0, 1.2, 0.9, 0.1, -0.4, -1.1, -2.5, -4.0}
	l32 := make([]float32, len(logits))
	for i, l := range logits {
		l32[i] = float32(l)
	}
	const draws = 100_000
	for _, tt := range []struct {
		name string
		opts SamplerOptions
		kept int // tokens the chain keeps
	}{
		{"temperature only", SamplerOptions{Temp: 0.8}, 8},
		{"temperature above 1", SamplerOptions{Temp: 1.7}, 8},
		{"llama.cpp default chain", DefaultSamplerOptions(), 5}, // top-p 0.95 keeps 5 (mass 0.972), min-p 0.05 all 5
		{"top-k 3", SamplerOptions{Temp: 1, TopK: 3}, 3},
		{"top-p 0.8 without top-k", SamplerOptions{Temp: 0.9, TopP: 0.8}, 3}, // mass 0.857
		{"min-p 0.1 without top-k", SamplerOptions{Temp: 1.2, MinP: 0.1}, 4}, // 5th: -2.4 < log 0.1 = -2.30
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := exactChain(tt.opts, logits)
			kept := 0
			for _, p := range want {
				if p > 0 {
					kept++
				}
			}
			if kept != tt.kept {
				t.Fatalf("the exact chain keeps %d tokens, want %d: %v", kept, tt.kept, want)
			}
			o := tt.opts
			o.Seed = 20260807
			s := NewSampler(o, nil)
			counts := make([]int, len(logits))
			for range draws {
				counts[s.Sample(l32, nil)]++
			}
			p, err := chiSquareP(counts, want)
			if err != nil || p < 1e-3 {
				t.Errorf("counts %v against %v: p = %.3g, %v; want p >= 0.001", counts, want, p, err)
			}
			other := tt.opts
			other.Temp *= 1.05
			if p2, _ := chiSquareP(counts, exactChain(other, logits)); p2 > 1e-6 {
				t.Errorf("counts %v do not reject temperature %g (p = %.3g): the test has no power", counts, other.Temp, p2)
			}
			t.Logf("%d draws, %d tokens kept: chi-square p = %.3f", draws, kept, p)
		})
	}
}

// BenchmarkSampler times one Sample call on vocabularies of Llama 2's 32000, Llama 3's
// 128256 and Qwen2's 151936 logits drawn from N(0, 3²), for llama.cpp's default chain
// and the variants that take other paths.
func BenchmarkSampler(b *testing.B) {
	for _, n := range []int{32000, 128256, 151936} {
		logits := randomLogits(rand.New(rand.NewPCG(1, 1)), n)
		history := make([]int32, 64)
		for i := range history {
			history[i] = int32(i * 97 % n)
		}
		for _, c := range []struct {
			name string
			opts SamplerOptions
		}{
			{"default", DefaultSamplerOptions()},
			{"greedy", SamplerOptions{}},
			{"default+penalty", SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, RepeatLastN: 64}},
			{"top-p", SamplerOptions{Temp: 0.8, TopP: 0.95}},
			{"min-p", SamplerOptions{Temp: 0.8, MinP: 0.05}},
			{"temp", SamplerOptions{Temp: 0.8}},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				s := NewSampler(c.opts, nil)
				for b.Loop() {
					s.Sample(logits, history)
				}
			})
		}
	}
}

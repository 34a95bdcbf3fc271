package model

import (
	"math"
	"math/rand/v2"
	"slices"
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

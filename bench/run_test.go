package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

// fakeSession records the calls a benchmark makes.
type fakeSession struct {
	pos    int
	calls  []string // "reset", "eval N@pos"
	first  []int32  // first token of each Eval after a reset
	failAt int      // Eval call that fails (1-based); 0 = never
	nEval  int
}

func (f *fakeSession) Eval(tokens []int32, all bool) ([]float32, error) {
	f.nEval++
	if f.nEval == f.failAt {
		return nil, errors.New("boom")
	}
	if f.pos == 0 {
		f.first = append(f.first, tokens[0])
	}
	f.calls = append(f.calls, fmt.Sprintf("eval %d@%d", len(tokens), f.pos))
	f.pos += len(tokens)
	return nil, nil
}

func (f *fakeSession) Reset() {
	f.pos = 0
	f.calls = append(f.calls, "reset")
}

// TestRunCalls checks what each test evaluates: pp one batch from an empty cache, tg
// one token at a time, each after a warm-up and each repetition from a reset, BOS first.
func TestRunCalls(t *testing.T) {
	tests := []struct {
		test   Test
		warmup bool
		want   []string
	}{
		{Test{Prompt: 4}, true, []string{"reset", "eval 4@0", "reset", "eval 4@0", "reset", "eval 4@0"}},
		{Test{Gen: 3}, true, []string{"reset", "eval 1@0", "reset", "eval 1@0", "eval 1@1", "eval 1@2",
			"reset", "eval 1@0", "eval 1@1", "eval 1@2"}},
		{Test{Prompt: 2, Gen: 1}, false, []string{"reset", "eval 2@0", "eval 1@2", "reset", "eval 2@0", "eval 1@2"}},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name(), func(t *testing.T) {
			s := &fakeSession{}
			r, err := Run(context.Background(), s, tt.test, Input{NVocab: 100, BOS: 7}, 2, tt.warmup)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.calls, tt.want) {
				t.Errorf("calls %q\nwant  %q", s.calls, tt.want)
			}
			if len(r.SamplesNS) != 2 {
				t.Errorf("%d samples, want 2", len(r.SamplesNS))
			}
			for _, b := range s.first {
				if b != 7 {
					t.Errorf("run starts with token %d, want BOS 7", b)
				}
			}
		})
	}
}

// TestRunErrors checks failures and bad arguments.
func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Run(ctx, &fakeSession{failAt: 3}, Test{Gen: 4}, Input{NVocab: 10, BOS: -1}, 2, true); err == nil {
		t.Error("failing Eval: no error")
	}
	if _, err := Run(ctx, &fakeSession{}, Test{}, Input{NVocab: 10}, 1, true); err == nil {
		t.Error("empty test: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(cancelled, &fakeSession{}, Test{Prompt: 1}, Input{NVocab: 10}, 1, false); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestStats checks llama-bench's mean and sample standard deviation of t/s.
func TestStats(t *testing.T) {
	r := Result{Test: Test{Prompt: 64}, SamplesNS: []int64{4e6, 5e6, 8e6}} // 16000, 12800, 8000 t/s
	if got := r.TokensPerSecond(); !slices.Equal(got, []float64{16000, 12800, 8000}) {
		t.Errorf("t/s %v", got)
	}
	if m, sd := r.Mean(), r.Stddev(); m != 12266.666666666666 || math.Abs(sd-4026.5784) > 1e-3 {
		t.Errorf("mean %v ± %v, want 12266.67 ± 4026.58", m, sd)
	}
	if sd := (Result{Test: Test{Gen: 1}, SamplesNS: []int64{5}}).Stddev(); sd != 0 {
		t.Errorf("stddev of one sample = %v", sd)
	}
}

// TestTests checks how -p and -n lists become tests.
func TestTests(t *testing.T) {
	got, err := Tests([]int{512, 0, 64}, []int{128})
	want := []Test{{Prompt: 512}, {Prompt: 64}, {Gen: 128}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Tests = %v, %v; want %v", got, err, want)
	}
	if _, err := Tests([]int{0}, []int{0}); !errors.Is(err, ErrNoTests) {
		t.Errorf("no tests: %v", err)
	}
	if _, err := Tests([]int{-1}, nil); err == nil {
		t.Error("negative count: no error")
	}
	names := []string{Test{Prompt: 512}.Name(), Test{Gen: 128}.Name(), Test{Prompt: 512, Gen: 128}.Name()}
	if !slices.Equal(names, []string{"pp512", "tg128", "pp512+tg128"}) {
		t.Errorf("names %v", names)
	}
}

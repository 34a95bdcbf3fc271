package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// fakeSession records the calls a benchmark makes.
type fakeSession struct {
	pos    int
	calls  []string // "reset", "eval N@pos"
	first  []int32  // first token of each Eval after a reset
	failAt int      // Eval call that fails (1-based); 0 = never
	nEval  int
	// perToken, when set, is how long Eval takes per token; took records each Eval's
	// duration by its "eval N@pos" name.
	perToken time.Duration
	took     map[string][]time.Duration
}

func (f *fakeSession) Eval(tokens []int32, all bool) ([]float32, error) {
	f.nEval++
	if f.nEval == f.failAt {
		return nil, errors.New("boom")
	}
	if f.pos == 0 {
		f.first = append(f.first, tokens[0])
	}
	name := fmt.Sprintf("eval %d@%d", len(tokens), f.pos)
	f.calls = append(f.calls, name)
	if f.perToken > 0 {
		start := time.Now()
		time.Sleep(time.Duration(len(tokens)) * f.perToken)
		if f.took == nil {
			f.took = map[string][]time.Duration{}
		}
		f.took[name] = append(f.took[name], time.Since(start))
	}
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
		// At a depth: the warm-up from an empty cache, each run after the depth's tokens.
		{Test{Prompt: 4, Depth: 6}, true, []string{"reset", "eval 4@0", "reset", "eval 6@0", "eval 4@6",
			"reset", "eval 6@0", "eval 4@6"}},
		{Test{Gen: 2, Depth: 3}, false, []string{"reset", "eval 3@0", "eval 1@3", "eval 1@4",
			"reset", "eval 3@0", "eval 1@3", "eval 1@4"}},
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

// TestRunDepthNotTimed checks that a run at a depth times the test's tokens only: each
// sample is shorter than the (slow) evaluation of the depth's tokens before it, and at
// least as long as the test's own evaluations.
func TestRunDepthNotTimed(t *testing.T) {
	for _, test := range []Test{{Prompt: 2, Depth: 100}, {Gen: 2, Depth: 100}} {
		s := &fakeSession{perToken: 2 * time.Millisecond}
		r, err := Run(context.Background(), s, test, Input{NVocab: 10, BOS: -1}, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		depth := s.took["eval 100@0"]
		timed := s.took["eval 2@100"]
		if test.Gen > 0 {
			timed = s.took["eval 1@100"]
		}
		if len(depth) != 2 || len(timed) != 2 || len(r.SamplesNS) != 2 {
			t.Fatalf("%s: depth evals %v, timed evals %v, samples %v", test.Name(), depth, timed, r.SamplesNS)
		}
		for i, ns := range r.SamplesNS {
			if got := time.Duration(ns); got >= depth[i] || got < timed[i] {
				t.Errorf("%s run %d: sample %v, want at least the test's eval (%v) and below the depth's (%v)",
					test.Name(), i+1, got, timed[i], depth[i])
			}
		}
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
	if _, err := Run(ctx, &fakeSession{}, Test{Prompt: 1, Depth: -1}, Input{NVocab: 10}, 1, true); err == nil {
		t.Error("negative depth: no error")
	}
	if _, err := Run(ctx, &fakeSession{failAt: 1}, Test{Prompt: 1, Depth: 4}, Input{NVocab: 10}, 1, false); err == nil {
		t.Error("failing depth Eval: no error")
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
	names := []string{Test{Prompt: 512}.Name(), Test{Gen: 128}.Name(), Test{Prompt: 512, Gen: 128}.Name(),
		Test{Gen: 256, Depth: 5071}.Name(), Test{Prompt: 512, Depth: 5071}.Name(), Test{Prompt: 1, Gen: 2, Depth: 3}.Name()}
	if !slices.Equal(names, []string{"pp512", "tg128", "pp512+tg128", "tg256 @ d5071", "pp512 @ d5071", "pp1+tg2 @ d3"}) {
		t.Errorf("names %v", names)
	}
}

// TestAtDepths checks llama-bench's order of -d: every test at one depth, then the next.
func TestAtDepths(t *testing.T) {
	got, err := AtDepths([]Test{{Prompt: 512}, {Gen: 128}}, []int{0, 5071})
	want := []Test{{Prompt: 512}, {Gen: 128}, {Prompt: 512, Depth: 5071}, {Gen: 128, Depth: 5071}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("AtDepths = %v, %v; want %v", got, err, want)
	}
	if c := want[3].Context(); c != 5199 || want[3].Tokens() != 128 {
		t.Errorf("tg128 @ d5071: context %d, timed tokens %d; want 5199, 128", c, want[3].Tokens())
	}
	if _, err := AtDepths(want, []int{4, -1}); err == nil {
		t.Error("negative depth: no error")
	}
}

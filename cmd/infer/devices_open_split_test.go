package main

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/gpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model"
)

// splits are the device lists the split tests compare with one GPU: two GPUs, and four
// and eight virtual devices on two GPUs.
var splits = [][]int{{0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1, 0, 1, 0, 1}}

// firstDiff returns the first index where a and b differ bitwise, or -1.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestGPUSplitBitIdentical is issue 6: logits over 2 GPUs and 4 or 8 virtual stages are
// bit-identical to one GPU, with the prompt pipelined in micro-batches of 16, and equal
// to unpipelined batches of 16.
func TestGPUSplitBitIdentical(t *testing.T) {
	needGPUs(t, 2)
	files := []string{testdata.Path(t, "stories260K-F32.gguf"), testdata.Path(t, "stories260K-Q4_0.gguf"),
		testdata.Path(t, "synth-256-Q4_K_M.gguf"), testdata.Path(t, "synth-256-Q8_0.gguf")}
	if *bigModel != "" {
		files = append(files, *bigModel)
	}
	prompt := make([]int32, 50)
	for i := range prompt {
		prompt[i] = int32(1 + (i*37)%500)
	}
	for _, path := range files {
		name := path[strings.LastIndex(path, "/")+1:]
		t.Run(name, func(t *testing.T) {
			opts := model.Options{ContextSize: 128, BatchSize: 64, MicroBatch: 16}
			one := evalAll(t, loadOn(t, path, opts, []int{0}, cuda.PeerOptions{}), prompt, 4)
			ub := opts
			ub.BatchSize = 16
			if i := firstDiff(evalAll(t, loadOn(t, path, ub, []int{0}, cuda.PeerOptions{}), prompt, 4), one); i >= 0 {
				t.Errorf("one GPU: micro-batches of 16 differ from batches of 16 at logit %d", i)
			}
			for _, devs := range splits {
				m := loadOn(t, path, opts, devs, cuda.PeerOptions{})
				got := evalAll(t, m, prompt, 4)
				i := firstDiff(got, one)
				t.Logf("%s on %v: %d stages, %d logits, first difference %d", name, devs, len(m.Plan().Stages), len(got), i)
				if i >= 0 {
					t.Errorf("%v: logit %d is %g, one GPU %g", devs, i, got[i], one[i])
				}
			}
		})
	}
	t.Run("perplexity", func(t *testing.T) {
		path := testdata.Path(t, "stories260K-Q8_0.gguf")
		opts := model.Options{ContextSize: 128, BatchSize: 128, MicroBatch: 64}
		want := perplexity(t, loadOn(t, path, opts, []int{0}, cuda.PeerOptions{}), 10)
		for _, devs := range splits {
			got := perplexity(t, loadOn(t, path, opts, devs, cuda.PeerOptions{}), 10)
			t.Logf("PPL on %v: %.6f (one GPU %.6f)", devs, got.PPL, want.PPL)
			if got.PPL != want.PPL || got.Uncertainty != want.Uncertainty {
				t.Errorf("%v: PPL %v ± %v, one GPU %v ± %v", devs, got.PPL, got.Uncertainty, want.PPL, want.Uncertainty)
			}
		}
	})
}

// TestGPUBatchAlternation is the permanent regression test of the multi-GPU path: a
// perplexity-style session alternating a warm-up batch of 2 tokens with a batch of
// 512, 1000 times, with peer access on, off, and mixed (one direction staged), gives no
// error and the logits of one GPU every time.
func TestGPUBatchAlternation(t *testing.T) {
	needGPUs(t, 2)
	iters := 1000
	if testing.Short() {
		iters = 50
	}
	path := testdata.Path(t, "stories260K-Q8_0.gguf")
	text, err := os.ReadFile(testdata.Path(t, "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	opts := model.Options{ContextSize: 512, BatchSize: 512}
	one := loadOn(t, path, opts, []int{0}, cuda.PeerOptions{})
	tokens := one.Tokenizer().Encode(string(text[:20000]), true)[:512]
	warm := tokens[:2]
	wantWarm, wantFull := alternate(t, one, warm, tokens, 1)
	const (
		peer   = cuda.PeerEnabled
		staged = cuda.PeerStaged
	)
	for _, tt := range []struct {
		name  string
		devs  []int
		popts cuda.PeerOptions
		want  []cuda.PeerState // the states of the plan's hops, in order
	}{
		{"2 GPUs, peer auto", []int{0, 1}, cuda.PeerOptions{Mode: cuda.PeerAuto}, []cuda.PeerState{peer}},
		{"2 GPUs, peer off", []int{0, 1}, cuda.PeerOptions{Mode: cuda.PeerOff}, []cuda.PeerState{staged}},
		{"4 stages, peer auto", []int{0, 1, 0, 1}, cuda.PeerOptions{Mode: cuda.PeerAuto}, []cuda.PeerState{peer, peer, peer}},
		{"4 stages, mixed: 1->0 staged", []int{0, 1, 0, 1}, cuda.PeerOptions{Mode: cuda.PeerAuto, Staged: [][2]int{{1, 2}}}, []cuda.PeerState{peer, staged, peer}},
		{"4 stages, mixed: second 0->1 staged", []int{0, 1, 0, 1}, cuda.PeerOptions{Mode: cuda.PeerAuto, Staged: [][2]int{{2, 3}}}, []cuda.PeerState{peer, peer, staged}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gm := placeOn(t, path, opts, tt.devs, tt.popts)
			checkPairs(t, gm, tt.want)
			m := gm.Model
			start := time.Now()
			gotWarm, gotFull := alternate(t, m, warm, tokens, iters)
			t.Logf("%s: %d alternations in %v", tt.name, iters, time.Since(start).Round(time.Millisecond))
			if i := firstDiff(gotWarm, wantWarm); i >= 0 {
				t.Errorf("warm-up logit %d: %g, one GPU %g", i, gotWarm[i], wantWarm[i])
			}
			if i := firstDiff(gotFull, wantFull); i >= 0 {
				t.Errorf("512-batch logit %d: %g, one GPU %g", i, gotFull[i], wantFull[i])
			}
		})
	}
}

// checkPairs checks the states of m's peer table, one per hop of its plan; a Peer
// expected on a machine without a peer path skips the test.
func checkPairs(t *testing.T, m *gpu.Model, want []cuda.PeerState) {
	t.Helper()
	var got []cuda.PeerState
	for _, pr := range m.Peers().Pairs() {
		got = append(got, pr.State)
		if pr.State == cuda.PeerUnsupported {
			t.Skipf("pair %d->%d: %s", pr.From, pr.To, pr.Reason)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pair states %v, want %v", got, want)
	}
}

// alternate runs iters rounds of (reset, warm with all logits, reset, full with all
// logits) on one session and returns the last round's logits; every round must give
// the first round's.
func alternate(t *testing.T, m *model.Model, warm, full []int32, iters int) (w, f []float32) {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range iters {
		s.Reset()
		got, err := s.Eval(warm, true)
		if err != nil {
			t.Fatalf("round %d, warm-up: %v", i, err)
		}
		if w == nil {
			w = append([]float32(nil), got...)
		} else if j := firstDiff(got, w); j >= 0 {
			t.Fatalf("round %d: warm-up logit %d changed", i, j)
		}
		s.Reset()
		if got, err = s.Eval(full, true); err != nil {
			t.Fatalf("round %d, batch of %d: %v", i, len(full), err)
		}
		if f == nil {
			f = append([]float32(nil), got...)
		} else if j := firstDiff(got, f); j >= 0 {
			t.Fatalf("round %d: batch logit %d changed", i, j)
		}
	}
	return w, f
}

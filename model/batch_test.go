package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// seqPlan is one sequence of a packed pass: history is evaluated first (alone), then
// tokens in the pass, with the logits of its last logits rows.
type seqPlan struct {
	history, tokens []int32
	logits          int
}

// ramp returns n token ids below vocab, starting at seed.
func ramp(n, seed, vocab int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32((seed + i*7 + i*i) % vocab)
	}
	return out
}

// packed evaluates plan's sequences in one Batch pass (micro-batches of ub, 0 = the
// model's) after their histories, and returns each sequence's logits.
func packed(t *testing.T, m *Model, plan []seqPlan, ub int) [][]float32 {
	t.Helper()
	var in []SeqInput
	rows := 0
	for _, p := range plan {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if len(p.history) > 0 {
			if _, err := s.Eval(p.history, false); err != nil {
				t.Fatal(err)
			}
		}
		in = append(in, SeqInput{Session: s, Tokens: p.tokens, Logits: p.logits})
		rows += len(p.tokens)
	}
	b, err := m.NewBatch(BatchOptions{Rows: rows, MicroBatch: ub})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Eval(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(got))
	for i, g := range got {
		out[i] = slices.Clone(g)
		if want := plan[i].logits * m.Config().NVocab; len(g) != want {
			t.Fatalf("sequence %d: %d logits, want %d", i, len(g), want)
		}
		if s := in[i].Session; s.Pos() != len(plan[i].history)+len(plan[i].tokens) {
			t.Fatalf("sequence %d: position %d after the pass, want %d", i, s.Pos(), len(plan[i].history)+len(plan[i].tokens))
		}
	}
	return out
}

// alone evaluates each of plan's sequences in its own session (after its history, in
// one batch with every row's logits) and returns the rows packed returns.
func alone(t *testing.T, m *Model, plan []seqPlan) [][]float32 {
	t.Helper()
	var out [][]float32
	V := m.Config().NVocab
	for _, p := range plan {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if len(p.history) > 0 {
			if _, err := s.Eval(p.history, false); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Eval(p.tokens, true)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(got[(len(p.tokens)-p.logits)*V:]))
		s.Close()
	}
	return out
}

// worstRel is the largest |got-want| over the rows, each relative to the row's largest
// |want|.
func worstRel(got, want []float32, V int) float64 {
	worst := 0.0
	for r := 0; r < len(want)/V; r++ {
		scale, diff := 0.0, 0.0
		for i := r * V; i < (r+1)*V; i++ {
			scale = max(scale, math.Abs(float64(want[i])))
			diff = max(diff, math.Abs(float64(got[i]-want[i])))
		}
		worst = max(worst, diff/scale)
	}
	return worst
}

// TestBatchMatchesAlone packs sequences of different lengths, starting positions and
// output rows into one pass and compares each with the same sequence evaluated alone:
// within 1e-5 (relative to the row's largest logit) for F32 weights, where the rows go
// through matmuls of other batch sizes, and bit for bit where a packed sequence's rows
// go through the same kernels as alone (perplexity's chunks: 128 rows each, empty
// histories, their second halves' logits).
func TestBatchMatchesAlone(t *testing.T) {
	mixed := []seqPlan{
		{ramp(5, 3, 512), ramp(7, 11, 512), 7},
		{nil, ramp(12, 1, 512), 3},
		{ramp(17, 5, 512), ramp(1, 9, 512), 1},
		{ramp(2, 8, 512), ramp(9, 2, 512), 0},
		{nil, ramp(4, 4, 512), 4},
	}
	var chunks []seqPlan
	for i := range 4 {
		c := ramp(128, 13*i, 512)
		c[0] = 1
		chunks = append(chunks, seqPlan{nil, c, 64})
	}
	tests := []struct {
		file  string
		plan  []seqPlan
		ub    int
		exact bool
	}{
		{"stories260K-F32.gguf", mixed, 0, false},
		{"stories260K-F32.gguf", mixed, 5, false},
		{"stories260K-F32.gguf", chunks, 0, true},
		{"stories260K-F32.gguf", chunks, 128, true},
		{"stories260K-Q4_0.gguf", chunks, 0, true},
		{"synth-256-Q4_K_M.gguf", chunks[:2], 0, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d seqs/ub %d", tt.file, len(tt.plan), tt.ub), func(t *testing.T) {
			for _, kv := range []KVCacheType{KVCacheF32, KVCacheF16} {
				m, err := Load(testdata.Path(t, tt.file), Options{Threads: 2, ContextSize: 128, KVType: kv})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				got, want := packed(t, m, tt.plan, tt.ub), alone(t, m, tt.plan)
				V := m.Config().NVocab
				for i := range want {
					if tt.exact {
						if j := sameBits(got[i], want[i]); j >= 0 {
							t.Errorf("kv %v: sequence %d: logit %d: packed %g, alone %g", kv, i, j, got[i][j], want[i][j])
						}
						continue
					}
					if d := worstRel(got[i], want[i], V); d > 1e-5 {
						t.Errorf("kv %v: sequence %d: packed differs from alone by %.3g of the largest logit", kv, i, d)
					}
				}
			}
		})
	}
}

// TestBatchSplitIdentical checks that a packed pass over 2 and 3 stages, in
// micro-batches that cut through sequences, gives one device's logits bit for bit.
func TestBatchSplitIdentical(t *testing.T) {
	path := testdata.Path(t, "stories260K-Q4_0.gguf")
	plan := []seqPlan{{ramp(3, 1, 512), ramp(11, 2, 512), 11}, {nil, ramp(9, 5, 512), 2}, {ramp(6, 7, 512), ramp(5, 3, 512), 5}}
	base := Options{Threads: 1, ContextSize: 64, KVType: KVCacheF16}
	m, err := Load(path, base)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := packed(t, m, plan, 8)
	for _, n := range []int{2, 3} {
		o := base
		o.Devices, o.Split.Ratios = cpuDevices(t, n), equal(n)
		ms, err := Load(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		got := packed(t, ms, plan, 8)
		for i := range want {
			if j := sameBits(got[i], want[i]); j >= 0 {
				t.Errorf("%d stages: sequence %d: logit %d: %g, one device %g", n, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestBatchErrors checks Batch.Eval's input checks, and that a rejected pass leaves
// every session where it was.
func TestBatchErrors(t *testing.T) {
	path := newTiny(6).file(t, tensor.F32)
	m, a := openSession(t, path, Options{ContextSize: 8, Threads: 1})
	bs, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	if _, err := a.Eval([]int32{1, 2, 3, 4, 5}, false); err != nil {
		t.Fatal(err)
	}
	_, foreign := openSession(t, path, Options{ContextSize: 8, Threads: 1})
	closed, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	b, err := m.NewBatch(BatchOptions{Rows: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tests := []struct {
		name string
		in   []SeqInput
		want string
		is   error
	}{
		{"none", nil, "no sequences", nil},
		{"nil session", []SeqInput{{Tokens: []int32{1}}}, "closed", ErrClosed},
		{"closed session", []SeqInput{{Session: closed, Tokens: []int32{1}}}, "closed", ErrClosed},
		{"other model", []SeqInput{{Session: foreign, Tokens: []int32{1}}}, "another model", nil},
		{"no tokens", []SeqInput{{Session: bs}}, "no tokens", nil},
		{"logits rows", []SeqInput{{Session: bs, Tokens: []int32{1}, Logits: 2}}, "2 logits rows of 1 tokens", nil},
		{"short out", []SeqInput{{Session: bs, Tokens: []int32{1}, Logits: 1, Out: make([]float32, 10)}}, "Out holds 10 floats, want 11", nil},
		{"twice", []SeqInput{{Session: bs, Tokens: []int32{1}}, {Session: bs, Tokens: []int32{2}}}, "appears twice", nil},
		{"too many rows", []SeqInput{{Session: bs, Tokens: make([]int32, 4)}, {Session: a, Tokens: make([]int32, 3)}}, "7 tokens exceed the batch's 6 rows", nil},
		{"context full", []SeqInput{{Session: bs, Tokens: []int32{1}}, {Session: a, Tokens: make([]int32, 4)}}, "sequence 1: model: context full: 4 tokens at position 5 overflow the context of 8", ErrContextFull},
		{"vocabulary", []SeqInput{{Session: bs, Tokens: []int32{1, 11}}}, "token 1 (11) outside the vocabulary of 11", nil},
	}
	for _, tt := range tests {
		_, err := b.Eval(context.Background(), tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%s: %v, want an error mentioning %q (is %v)", tt.name, err, tt.want, tt.is)
		}
		if a.Pos() != 5 || bs.Pos() != 0 {
			t.Fatalf("%s: positions %d and %d after a rejected pass, want 5 and 0", tt.name, a.Pos(), bs.Pos())
		}
	}
	if _, err := a.Eval(make([]int32, 4), false); !errors.Is(err, ErrContextFull) {
		t.Errorf("Session.Eval past the context: %v, want ErrContextFull", err)
	}
	b.Close()
	if _, err := b.Eval(context.Background(), []SeqInput{{Session: bs, Tokens: []int32{1}}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Eval on a closed batch: %v, want ErrClosed", err)
	}
}

// cancelling is a CPU device that calls cancel at its first Embed (the start of the
// first micro-batch) and counts Embeds.
type cancelling struct {
	*cpu.Device
	cancel func()
	embeds int
}

func (d *cancelling) Embed(dst, table, tokens backend.Buffer) {
	d.embeds++
	d.cancel()
	d.Device.Embed(dst, table, tokens)
}

// TestEvalCancelled cancels the context during the first of three micro-batches: the
// pass stops there (one Embed), the error is the context's, no session advances, and
// the sessions evaluate normally afterwards.
func TestEvalCancelled(t *testing.T) {
	path := newTiny(5).file(t, tensor.F32)
	tokens := ramp(12, 1, 11)
	want := func() []float32 {
		_, s := openSession(t, path, Options{Threads: 1, BatchSize: 12, MicroBatch: 4, KVType: KVCacheF32})
		got, err := s.Eval(tokens, true)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(got)
	}()
	for _, viaBatch := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		d := &cancelling{Device: cpu.New(1), cancel: cancel}
		defer d.Close()
		m, s := openSession(t, path, Options{Device: d, BatchSize: 12, MicroBatch: 4, KVType: KVCacheF32})
		b, err := m.NewBatch(BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		eval := func(ctx context.Context) ([]float32, error) {
			if !viaBatch {
				return s.EvalContext(ctx, tokens, true)
			}
			out, err := b.Eval(ctx, []SeqInput{{Session: s, Tokens: tokens, Logits: len(tokens)}})
			if err != nil {
				return nil, err
			}
			return out[0], nil
		}
		if _, err := eval(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("batch %v: cancelled eval: %v, want context.Canceled", viaBatch, err)
		}
		if d.embeds != 1 || s.Pos() != 0 {
			t.Fatalf("batch %v: %d micro-batches ran and position %d after the cancel, want 1 and 0", viaBatch, d.embeds, s.Pos())
		}
		d.cancel = func() {}
		got, err := eval(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("batch %v: logit %d after a cancelled eval %g, want %g", viaBatch, i, got[i], want[i])
		}
	}
}

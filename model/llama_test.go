package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/infergo/infer/tensor"
)

var tinyPrompt = []int32{1, 5, 9, 2, 10, 0, 3, 3, 7, 4}

// TestForwardMatchesFloat64 checks the logits of the writer-made tiny model against a
// float64 forward pass written independently in the test.
func TestForwardMatchesFloat64(t *testing.T) {
	tm := newTiny(1)
	want := tm.forward64(tinyPrompt)
	tests := []struct {
		weights, kv tensor.DType
		tol         float64
	}{
		{tensor.F32, tensor.F32, 2e-5},
		{tensor.F32, tensor.F16, 5e-3}, // K, V, Q and the V accumulator rounded to F16
		{tensor.F16, tensor.F32, 2e-2}, // weights and activations rounded to F16
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("w=%v/kv=%v", tt.weights, tt.kv), func(t *testing.T) {
			got := evalTiny(t, tm, tt.weights, Options{KVType: kvOf(tt.kv), Threads: 2}, tinyPrompt, true)
			var worst float64
			for i := range want {
				worst = math.Max(worst, math.Abs(float64(got[i])-want[i]))
			}
			t.Logf("max abs logit error %.3g", worst)
			if !(worst <= tt.tol) {
				t.Errorf("max abs logit error %.3g > %.3g", worst, tt.tol)
			}
		})
	}
}

// TestBatchEqualsTokenByToken checks that a prompt evaluated as one batch and in
// batches of 4 gives the same logits bit for bit (every op of a row is independent of
// the batch's other rows), and one token at a time, or with only the last row's
// logits, the same within 1e-5: as in llama.cpp, a one-row matmul takes ggml_vec_dot
// where larger ones take tinyBLAS, whose summation order differs.
func TestBatchEqualsTokenByToken(t *testing.T) {
	tm := newTiny(2)
	for _, kv := range []tensor.DType{tensor.F32, tensor.F16} {
		t.Run(kv.String(), func(t *testing.T) {
			path := tm.file(t, tensor.F32)
			whole := evalPath(t, path, Options{KVType: kvOf(kv), Threads: 2}, tinyPrompt, true)
			batched := evalPath(t, path, Options{KVType: kvOf(kv), Threads: 1, BatchSize: 4}, tinyPrompt, true)
			for i := range whole {
				if batched[i] != whole[i] {
					t.Fatalf("logit %d: batches of 4 %g, one batch %g", i, batched[i], whole[i])
				}
			}
			m, s := openSession(t, path, Options{KVType: kvOf(kv), Threads: 2})
			V := m.Config().NVocab
			for i, tok := range tinyPrompt {
				one, err := s.Eval([]int32{tok}, false)
				if err != nil {
					t.Fatal(err)
				}
				if s.Pos() != i+1 {
					t.Fatalf("Pos() = %d after %d tokens", s.Pos(), i+1)
				}
				for j := range V {
					if w := whole[i*V+j]; math.Abs(float64(one[j]-w)) > 1e-5*(1+math.Abs(float64(w))) {
						t.Fatalf("token %d logit %d: one by one %g, one batch %g", i, j, one[j], w)
					}
				}
			}
			last, err := evalLast(path, kv, tinyPrompt)
			if err != nil {
				t.Fatal(err)
			}
			for j := range V { // the last block's feed-forward runs on one row here
				if w := whole[(len(tinyPrompt)-1)*V+j]; math.Abs(float64(last[j]-w)) > 1e-5*(1+math.Abs(float64(w))) {
					t.Fatalf("Eval(all=false) logit %d = %g, want the last row's %g", j, last[j], w)
				}
			}
		})
	}
}

// TestTiedOutput checks that a file without output.weight uses token_embd.weight.
func TestTiedOutput(t *testing.T) {
	tm := newTiny(3)
	copy(tm.tensors["output.weight"], tm.tensors["token_embd.weight"])
	want := evalTiny(t, tm, tensor.F32, Options{KVType: KVCacheF32}, tinyPrompt, true)
	got := evalPath(t, tm.file(t, tensor.F32, "output.weight"), Options{KVType: KVCacheF32}, tinyPrompt, true)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logit %d: tied %g, explicit copy %g", i, got[i], want[i])
		}
	}
}

func evalTiny(t *testing.T, tm *tiny, dt tensor.DType, opts Options, tokens []int32, all bool) []float32 {
	t.Helper()
	return evalPath(t, tm.file(t, dt), opts, tokens, all)
}

func evalPath(t *testing.T, path string, opts Options, tokens []int32, all bool) []float32 {
	t.Helper()
	m, s := openSession(t, path, opts)
	got, err := s.Eval(tokens, all)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(tokens) * m.Config().NVocab; all && len(got) != want {
		t.Fatalf("Eval returned %d logits, want %d", len(got), want)
	}
	return append([]float32(nil), got...)
}

func evalLast(path string, kv tensor.DType, tokens []int32) ([]float32, error) {
	m, err := Load(path, Options{KVType: kvOf(kv), BatchSize: 4})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	s, err := m.NewSession()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	got, err := s.Eval(tokens, false)
	return append([]float32(nil), got...), err
}

// kvOf is the cache type of dt (F16 or F32), for tests that loop over tensor types.
func kvOf(dt tensor.DType) KVCacheType {
	t, err := KVCacheTypeOf(dt)
	if err != nil {
		panic(err)
	}
	return t
}

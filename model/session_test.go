package model

import (
	"strings"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestSessionErrors checks Eval's input checks and that a rejected call leaves the
// session usable.
func TestSessionErrors(t *testing.T) {
	tm := newTiny(6)
	_, s := openSession(t, tm.file(t, tensor.F32), Options{ContextSize: 8, KVType: KVCacheF16})
	if s.Ctx() != 8 {
		t.Fatalf("Ctx() = %d, want 8", s.Ctx())
	}
	tests := []struct {
		tokens []int32
		want   string
	}{
		{nil, "no tokens"},
		{[]int32{1, 11}, "token 1 (11) outside the vocabulary of 11"},
		{[]int32{-1}, "outside the vocabulary"},
		{make([]int32, 9), "overflow the context of 8"},
	}
	for _, tt := range tests {
		if _, err := s.Eval(tt.tokens, false); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Eval(%v) = %v, want an error mentioning %q", tt.tokens, err, tt.want)
		}
	}
	if s.Pos() != 0 {
		t.Fatalf("Pos() = %d after rejected calls, want 0", s.Pos())
	}
	first, err := s.Eval([]int32{1, 2, 3}, false)
	if err != nil {
		t.Fatal(err)
	}
	first = append([]float32(nil), first...)
	s.Reset()
	again, err := s.Eval([]int32{1, 2, 3}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if first[i] != again[i] {
			t.Fatalf("after Reset logit %d = %g, want %g", i, again[i], first[i])
		}
	}
	if _, err := s.Eval(make([]int32, 6), false); err == nil {
		t.Fatal("Eval past the context succeeded")
	}
	s.Close()
	if _, err := s.Eval([]int32{1}, false); err == nil {
		t.Fatal("Eval after Close succeeded")
	}
}

// TestDecodeDoesNotAllocate checks that a steady one-token decode step allocates
// nothing on the CPU device.
func TestDecodeDoesNotAllocate(t *testing.T) {
	tm := newTiny(7)
	_, s := openSession(t, tm.file(t, tensor.F32), Options{KVType: KVCacheF16, Threads: 2})
	tok := []int32{3}
	if _, err := s.Eval(tok, false); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := s.Eval(tok, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("one-token Eval allocates %v times", allocs)
	}
}

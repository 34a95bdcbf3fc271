package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/synth"
)

// synthTiny writes the tiny shape in type typ with 'infer synth' and returns its path.
func synthTiny(t *testing.T, typ string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny-"+typ+".gguf")
	var stdout, stderr bytes.Buffer
	args := []string{"synth", "--shape", "tiny", "--type", typ, "-o", path, "--seed", "5", "-t", "2"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("infer %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "wrote "+path+": tiny "+typ) {
		t.Errorf("stdout %q", stdout.String())
	}
	return path
}

// TestSynthCommand writes a model and checks it against llama.cpp's loading rules.
func TestSynthCommand(t *testing.T) {
	path := synthTiny(t, "Q4_K_M")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := synth.Check(f); err != nil {
		t.Fatal(err)
	}
	if ti, ok := f.Tensor("blk.1.ffn_up.weight"); !ok || ti.Type.String() != "Q4_K" {
		t.Errorf("blk.1.ffn_up.weight: %+v", ti)
	}
}

// TestSynthUsage checks that bad command lines are usage errors.
func TestSynthUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.gguf")
	tests := [][]string{
		{"--shape", "tiny", "--type", "F32"},
		{"--shape", "3b", "--type", "F32", "-o", out},
		{"--shape", "tiny", "--type", "Q4_K_S", "-o", out},
		{"--shape", "tiny", "--layers", "-1", "-o", out},
		{"--shape", "tiny", "--arch", "gemma", "-o", out},
		{"--bogus"},
	}
	for _, args := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"synth"}, args...), &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("synth %v: %v, want a usage error", args, err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// inspectFixture writes a file with a long array, a long string, a NaN and two tensors.
func inspectFixture(t *testing.T) string {
	t.Helper()
	w := gguf.NewWriter()
	w.Set("general.architecture", gguf.Str("llama"))
	w.Set("general.alignment", gguf.Uint32(64))
	w.Set("tokenizer.ggml.tokens", gguf.Strings([]string{"<unk>", "<s>", "</s>", "a", "b", "c"}))
	w.Set("tokenizer.chat_template", gguf.Str(strings.Repeat("{% x %}", 40)))
	w.Set("test.nan", gguf.Float32(float32(math.NaN())))
	w.Set("test.nested", gguf.Array(gguf.ArrayType, []gguf.Value{gguf.Int32Array([]int32{-1, 2})}))
	w.AddTensorBytes("output_norm.weight", tensor.F32, []uint64{4}, make([]byte, 16))
	w.AddTensorBytes("token_embd.weight", tensor.Q8_0, []uint64{32, 6}, make([]byte, 6*34))
	path := filepath.Join(t.TempDir(), "fixture.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectText(t *testing.T) {
	path := inspectFixture(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"inspect", path}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"GGUF v3", "alignment 64",
		"metadata (6 keys):",
		`tokenizer.ggml.tokens    array[string]  [6 strings: "<unk>", "<s>", "</s>", ... ]`,
		`"{% x %}{% x %}`, "... (280 bytes)",
		"test.nan", "NaN",
		"array[array]", "[[-1, 2]]",
		"tensors (2):",
		"  output_norm.weight  F32    [4]               16           0x0\n",
		"  token_embd.weight   Q8_0   [32 6]           204          0x40\n",
		"total: 2 tensors (F32×1, Q8_0×1), 196 elements, 220 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	path := inspectFixture(t)
	var stdout, stderr bytes.Buffer
	// The flag may follow the file.
	if err := run(context.Background(), []string{"inspect", path, "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var r inspectReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if r.Version != 3 || r.Alignment != 64 || len(r.Metadata) != 6 || len(r.Tensors) != 2 || r.Bytes != 220 {
		t.Errorf("report %+v", r)
	}
	if toks, ok := r.Metadata[2].Value.([]any); !ok || len(toks) != 6 || toks[5] != "c" {
		t.Errorf("tokens %v, want all 6 in full", r.Metadata[2].Value)
	}
	if r.Metadata[4].Value != "NaN" || r.Tensors[1].Type != "Q8_0" || r.Tensors[1].Offset != 64 {
		t.Errorf("nan %v, tensor %+v", r.Metadata[4].Value, r.Tensors[1])
	}
}

// TestInspectShared inspects a real model and checks the tensor count and totals line.
func TestInspectShared(t *testing.T) {
	path := testdata.Path(t, "synth-256-Q4_K_M.gguf")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"inspect", path}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"general.file_type", "uint32", "15", "tensors (39):", "(F32×9, Q4_K×30)", "blk.3.ffn_up.weight"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestInspectErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	w := gguf.NewWriter()
	w.WriteFile(bad)
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{nil, true, "want one FILE"},
		{[]string{"a", "b"}, true, "got 2"},
		{[]string{"--bogus", "a"}, true, "bogus"},
		{[]string{filepath.Join(t.TempDir(), "none.gguf")}, false, "no such file"},
		{[]string{inspectFixture(t)[:0] + "/dev/null"}, false, "is a device, not a GGUF file"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"inspect"}, tt.args...), &stdout, &stderr)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &ue) != tt.usage {
			t.Errorf("inspect %q: error %v, want %q (usage %v)", tt.args, err, tt.want, tt.usage)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"inspect", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "usage: infer inspect") {
		t.Errorf("inspect -h: %v, stderr %q", err, stderr.String())
	}
}

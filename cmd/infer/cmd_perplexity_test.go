package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

var (
	runningRE = regexp.MustCompile(`^((\[\d+\]\d+\.\d{4},)+)\nFinal estimate: PPL = (\d+\.\d{4}) \+/- (\d+\.\d{5})\n$`)
	valueRE   = regexp.MustCompile(`\[(\d+)\](\d+\.\d{4}),`)
)

// TestPerplexityCommand runs 'infer perplexity' on stories260K-F32 with an F32 KV
// cache over 4 chunks and compares its stdout, in llama.cpp's format, with llama.cpp's
// running values (within 0.01%).
func TestPerplexityCommand(t *testing.T) {
	var want []float64
	for _, m := range testdata.LoadReference(t).Models {
		if m.File == "stories260K-F32.gguf" {
			want = m.PerplexityKVF32NoFA[0].Running[:4]
		}
	}
	model := testdata.Path(t, "stories260K-F32.gguf")
	text := testdata.Path(t, "tinyshakespeare.txt")
	var stdout, stderr bytes.Buffer
	args := []string{"perplexity", "-m", model, "-f", text, "-c", "128", "-b", "128", "--chunks", "4", "-ctk", "f32", "-ctv", "f32"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	m := runningRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("stdout not in llama-perplexity's format:\n%s", stdout.String())
	}
	values := valueRE.FindAllStringSubmatch(m[1], -1)
	if len(values) != len(want) {
		t.Fatalf("%d running values, want %d", len(values), len(want))
	}
	for i, v := range values {
		got, _ := strconv.ParseFloat(v[2], 64)
		if v[1] != fmt.Sprint(i+1) || math.Abs(got/want[i]-1) > 1e-4 {
			t.Errorf("[%s]%s, llama.cpp [%d]%.4f", v[1], v[2], i+1, want[i])
		}
	}
	if m[3] != values[3][2] {
		t.Errorf("final PPL %s differs from the last running value %s", m[3], values[3][2])
	}
	if !bytes.Contains(stderr.Bytes(), []byte("chunk 4/4")) {
		t.Errorf("stderr lacks progress:\n%s", stderr.String())
	}
}

package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/internal/testdata"
)

// anchor is the head of llama-bench's table for stories260K-Q4_0 in
// ../shared/testdata/llamacpp-cpu-bench.txt, with the t/s of our Result.
const anchor = `| model                          |       size |     params | backend    | threads |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |
| llama ?B Q4_0                  |   0.25 MiB |     0.29 M | CPU        |       2 |            pp64 |   12000.00 ± 5656.85 |
`

func TestMarkdownLayout(t *testing.T) {
	var b bytes.Buffer
	p := NewMarkdown(&b, Columns{Threads: true}, "test")
	row := Row{
		Model:   Model{Desc: "llama ?B Q4_0", Size: 262_000, Params: 292_000},
		Backend: "CPU", Threads: 2,
		Result: Result{Test: Test{Prompt: 64}, SamplesNS: []int64{4e6, 8e6}}, // 16000, 8000 t/s
	}
	if err := p.Header(); err != nil {
		t.Fatal(err)
	}
	if err := p.Row(row); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != anchor {
		t.Errorf("got\n%s\nwant\n%s", got, anchor)
	}
	p.Footer()
	if !strings.HasSuffix(b.String(), "\nbuild: test\n") {
		t.Errorf("footer: %q", b.String())
	}
}

// TestMarkdownMatchesLlamaBench checks that every '|' of our header, rule and row
// falls on the same column as in llama-bench's own tables.
func TestMarkdownMatchesLlamaBench(t *testing.T) {
	b, err := os.ReadFile(testdata.Path(t, "llamacpp-cpu-bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| ") && len(theirs) < 3 {
			theirs = append(theirs, l)
		}
	}
	ours := strings.Split(anchor, "\n")
	for i := range theirs {
		if got, want := bars(ours[i]), bars(theirs[i]); !slices.Equal(got, want[:len(got)]) {
			t.Errorf("line %d: bars at %v, llama-bench %v", i, got, want)
		}
	}
}

// bars returns the rune columns of the '|' characters of a line.
func bars(line string) []int {
	var cols []int
	for i, r := range []rune(line) {
		if r == '|' {
			cols = append(cols, i)
		}
	}
	return cols
}

func TestMarkdownGPUColumns(t *testing.T) {
	var b bytes.Buffer
	p := NewMarkdown(&b, Columns{NGL: true, SplitMode: true, TensorSplit: true}, "x")
	p.Header()
	p.Row(Row{Model: Model{Desc: "llama 7B Q4_0", Size: 3 << 30, Params: 6_738_415_616}, Backend: "CUDA",
		NGL: 99, SplitMode: "layer", TensorSplit: "1/1",
		Result: Result{Test: Test{Gen: 128}, SamplesNS: []int64{1e9}}})
	lines := strings.Split(b.String(), "\n")
	want := "| llama 7B Q4_0                  |   3.00 GiB |     6.74 B | CUDA       |  99 |  layer | 1/1          |           tg128 |        128.00 ± 0.00 |"
	if lines[0] != "| model                          |       size |     params | backend    | ngl |     sm | ts           |            test |                  t/s |" || lines[2] != want {
		t.Errorf("got\n%s", b.String())
	}
}

// TestMarkdownBatchColumns checks the n_batch and n_ubatch columns (shown, as
// llama-bench shows them, when -b or -ub is not the default) and a backend cell longer
// than llama-bench's column, which widens the column for every line.
func TestMarkdownBatchColumns(t *testing.T) {
	var b bytes.Buffer
	p := NewMarkdown(&b, Columns{Threads: true, NBatch: true, NUBatch: true}, "x")
	p.Header()
	p.Row(Row{Model: Model{Desc: "llama ?B Q4_0", Size: 262_000, Params: 292_000}, Backend: "CPU", CPULevel: "portable",
		Threads: 2, Batch: 64, UBatch: 16, Result: Result{Test: Test{Gen: 256, Depth: 5071}, SamplesNS: []int64{1e9}}})
	want := []string{
		"| model                          |       size |     params | backend      | threads | n_batch | n_ubatch |            test |                  t/s |",
		"| ------------------------------ | ---------: | ---------: | ------------ | ------: | ------: | -------: | --------------: | -------------------: |",
		"| llama ?B Q4_0                  |   0.25 MiB |     0.29 M | CPU portable |       2 |      64 |       16 |   tg256 @ d5071 |        256.00 ± 0.00 |",
	}
	if got := strings.Split(b.String(), "\n"); !slices.Equal(got[:3], want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), strings.Join(want, "\n"))
	}
}

// TestMarkdownSizedFromContent: cells longer than llama-bench's columns (a backend of
// two ranks over NCCL, a test at a large depth, a long model name, a long -ts) widen
// their columns, so that every '|' of the header, the rule and the rows lines up; a
// table without rows keeps llama-bench's widths.
func TestMarkdownSizedFromContent(t *testing.T) {
	var b bytes.Buffer
	p := NewMarkdown(&b, Columns{NGL: true, TensorSplit: true}, "x")
	p.Header()
	row := Row{Model: Model{Desc: "qwen3moe 30B.A3B Q4_K - Medium", Size: 17 << 30, Params: 30_532_122_624},
		Backend: "CUDA x2 nccl", NGL: 99, TensorSplit: "0.35/0.33/0.32",
		Result: Result{Test: Test{Gen: 128, Depth: 1_000_000}, SamplesNS: []int64{1e9}}}
	p.Row(row)
	row.Backend, row.Result.Test.Depth = "CUDA x2 tcp", 0
	p.Row(row)
	p.Footer()
	lines := strings.Split(b.String(), "\n")
	for _, cell := range []string{"| CUDA x2 nccl |", "| CUDA x2 tcp  |", "| tg128 @ d1000000 |", "| 0.35/0.33/0.32 |", "| qwen3moe 30B.A3B Q4_K - Medium |"} {
		if !strings.Contains(b.String(), cell) {
			t.Errorf("no cell %q in\n%s", cell, b.String())
		}
	}
	for i := 1; i < 4; i++ {
		if got, want := bars(lines[i]), bars(lines[0]); !slices.Equal(got, want) {
			t.Errorf("line %d: bars at %v, the header's at %v\n%s", i, got, want, b.String())
		}
	}

	b.Reset()
	p = NewMarkdown(&b, Columns{Threads: true}, "x")
	p.Header()
	p.Footer()
	if got := strings.Split(b.String(), "\n"); got[0] != strings.Split(anchor, "\n")[0] || got[3] != "build: x" {
		t.Errorf("a table without rows:\n%s", b.String())
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	p := NewJSON(&b, "abc")
	p.Header()
	for _, n := range []int{16, 4} {
		p.Row(Row{Model: Model{Filename: "m.gguf", Desc: "d"}, Backend: "CPU", CPULevel: "avx2", Threads: 2,
			Batch: 2048, UBatch: 512, Time: time.Unix(0, 0),
			Result: Result{Test: Test{Prompt: n, Depth: 7}, SamplesNS: []int64{1e6, 3e6}}})
	}
	p.Footer()
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(rows) != 2 || rows[0]["n_prompt"] != 16.0 || rows[1]["avg_ns"] != 2e6 || rows[0]["build_commit"] != "abc" {
		t.Errorf("rows %v", rows)
	}
	for _, r := range rows {
		if r["n_batch"] != 2048.0 || r["n_ubatch"] != 512.0 || r["n_depth"] != 7.0 || r["backends"] != "CPU" || r["cpu_level"] != "avx2" {
			t.Errorf("row %v: want n_batch 2048, n_ubatch 512, n_depth 7, backends CPU, cpu_level avx2", r)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatSize(1185376), "1.13 MiB"},
		{FormatSize(3_825_065_984), "3.56 GiB"},
		{FormatParams(292_000), "0.29 M"},
		{FormatParams(6_738_415_616), "6.74 B"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

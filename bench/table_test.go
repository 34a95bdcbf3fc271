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

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	p := NewJSON(&b, "abc")
	p.Header()
	for _, n := range []int{16, 4} {
		p.Row(Row{Model: Model{Filename: "m.gguf", Desc: "d"}, Backend: "CPU", Threads: 2, Time: time.Unix(0, 0),
			Result: Result{Test: Test{Prompt: n}, SamplesNS: []int64{1e6, 3e6}}})
	}
	p.Footer()
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(rows) != 2 || rows[0]["n_prompt"] != 16.0 || rows[1]["avg_ns"] != 2e6 || rows[0]["build_commit"] != "abc" {
		t.Errorf("rows %v", rows)
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// runPPL runs 'infer perplexity' with args and returns stdout and stderr.
func runPPL(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(ctx, append([]string{"perplexity"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestPerplexityCommandPacked checks that -b 512 -c 128 packs four chunks per pass
// (n_seq=4 on stderr, as llama-perplexity prints it) and prints exactly what one
// chunk per pass prints.
func TestPerplexityCommandPacked(t *testing.T) {
	model := testdata.Path(t, "stories260K-Q4_0.gguf")
	text := testdata.Path(t, "tinyshakespeare.txt")
	var outs []string
	for _, b := range []string{"128", "512"} {
		stdout, stderr, err := runPPL(t, context.Background(), "-m", model, "-f", text, "-c", "128", "-b", b, "--chunks", "8", "-t", "2")
		if err != nil {
			t.Fatalf("-b %s: %v\n%s", b, err, stderr)
		}
		want := map[string]string{"128": "n_seq=1", "512": "n_seq=4"}[b]
		if !strings.Contains(stderr, "calculating perplexity over 8 chunks, n_ctx=128, batch_size="+b+", "+want) {
			t.Errorf("-b %s: stderr lacks llama-perplexity's line with %s:\n%s", b, want, stderr)
		}
		if !runningRE.MatchString(stdout) {
			t.Errorf("-b %s: stdout not in llama-perplexity's format:\n%s", b, stdout)
		}
		outs = append(outs, stdout)
	}
	if outs[0] != outs[1] {
		t.Errorf("-b 512 printed\n%s\n-b 128 printed\n%s", outs[1], outs[0])
	}
}

// numberRE matches the numbers of a printed line with the spaces that pad them.
var numberRE = regexp.MustCompile(` *-?\d+(\.(\d+))?`)

// lineShape is a printed line with every number replaced by its width with its padding
// and its count of decimals, so that two outputs in the same format have the same
// shapes.
func lineShape(line string) string {
	return numberRE.ReplaceAllStringFunc(line, func(s string) string {
		dec := 0
		if i := strings.IndexByte(s, '.'); i >= 0 {
			dec = len(s) - i - 1
		}
		return fmt.Sprintf("<%d.%d>", len(s), dec)
	})
}

// kldLines returns the lines of a --kl-divergence output from the table header on.
func kldLines(t *testing.T, out string) []string {
	t.Helper()
	i := strings.Index(out, "chunk ")
	if i < 0 {
		t.Fatalf("no table header in:\n%s", out)
	}
	return strings.Split(strings.TrimRight(out[i:], "\n"), "\n")
}

// TestKLDCommand writes a base file with stories260K-F32 (four chunks per pass), reads
// it back with --kl-divergence for stories260K-Q4_0, and compares the printed table and
// statistics blocks line by line with llama.cpp's output in shape (every number's
// width), then checks the --json variant.
func TestKLDCommand(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.kld")
	text := testdata.Path(t, "tinyshakespeare.txt")
	common := []string{"-c", "128", "-b", "512", "--chunks", "4", "-t", "2"}
	_, stderr, err := runPPL(t, context.Background(), append([]string{"-m", testdata.Path(t, "stories260K-F32.gguf"), "-f", text, "--kl-divergence-base", base}, common...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "saving all logits to "+base) {
		t.Errorf("stderr lacks the saving line:\n%s", stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("files in the directory: %v, want the base file only", left)
	}
	q4 := testdata.Path(t, "stories260K-Q4_0.gguf")
	stdout, stderr, err := runPPL(t, context.Background(), "-m", q4, "--kl-divergence-base", base, "--kl-divergence", "-b", "512", "-t", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	ref, err := os.ReadFile(testdata.Path(t, "kld/stories260K-Q4_0.kld.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := kldLines(t, stdout), kldLines(t, string(ref))
	// ours has 4 rows, llama.cpp's 20: compare the header and rows, then the blocks
	if len(got) != len(want)-16 {
		t.Fatalf("%d lines from the table header on, llama.cpp %d for 16 more chunks:\n%s", len(got), len(want), stdout)
	}
	for i := range got {
		j := i
		if i > 4 {
			j = i + 16
		}
		if lineShape(got[i]) != lineShape(want[j]) {
			t.Errorf("line %d:\n%q\nllama.cpp:\n%q", i, got[i], want[j])
		}
	}
	if !strings.Contains(stderr, "kl_divergence: computing over 4 chunks, n_ctx=128, batch_size=512, n_seq=4") {
		t.Errorf("stderr lacks the computing line:\n%s", stderr)
	}

	stdout, stderr, err = runPPL(t, context.Background(), "-m", q4, "--kl-divergence-base", base, "--kl-divergence", "-b", "256", "-t", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var js struct {
		NSeq   int `json:"n_seq"`
		Chunks []struct {
			Chunk int     `json:"chunk"`
			KLD   float64 `json:"kld"`
		} `json:"chunks"`
		Stats struct {
			Tokens int     `json:"tokens"`
			KLD    float64 `json:"kld"`
			PPL    float64 `json:"ppl"`
			KLDP   []struct {
				P, Value float64
			} `json:"kld_percentiles"`
			DPP []json.RawMessage `json:"delta_p_percentiles"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("--json: %v:\n%s", err, stdout)
	}
	if js.NSeq != 2 || len(js.Chunks) != 4 || js.Chunks[3].Chunk != 4 || js.Stats.Tokens != 252 || len(js.Stats.KLDP) != 11 || len(js.Stats.DPP) != 13 {
		t.Errorf("--json: n_seq %d, %d chunks, %d tokens, %d and %d percentiles; want 2, 4, 252, 11, 13", js.NSeq, len(js.Chunks), js.Stats.Tokens, len(js.Stats.KLDP), len(js.Stats.DPP))
	}
	if js.Stats.KLD <= 0 || js.Stats.KLD != js.Chunks[3].KLD || js.Stats.KLDP[5].P != 0.5 {
		t.Errorf("--json: KLD %g, last chunk's %g, median at p %g", js.Stats.KLD, js.Chunks[3].KLD, js.Stats.KLDP[5].P)
	}
}

// TestPerplexityJSON checks --json for a perplexity run: the final values and one entry
// per chunk, and nothing else on stdout.
func TestPerplexityJSON(t *testing.T) {
	stdout, stderr, err := runPPL(t, context.Background(), "-m", testdata.Path(t, "stories260K-Q8_0.gguf"), "-f", testdata.Path(t, "tinyshakespeare.txt"),
		"-c", "64", "-b", "256", "--chunks", "6", "-t", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var js struct {
		NCtx   int     `json:"n_ctx"`
		NSeq   int     `json:"n_seq"`
		NChunk int     `json:"n_chunk"`
		Scored int     `json:"scored"`
		PPL    float64 `json:"ppl"`
		Unc    float64 `json:"ppl_uncertainty"`
		Chunks []struct {
			Chunk, Start int
			PPL          float64 `json:"ppl"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if js.NCtx != 64 || js.NSeq != 4 || js.NChunk != 6 || js.Scored != 6*31 || len(js.Chunks) != 6 || js.Chunks[5].Start != 5*64 {
		t.Errorf("n_ctx %d, n_seq %d, n_chunk %d, %d scored, %d chunks: want 64, 4, 6, 186, 6", js.NCtx, js.NSeq, js.NChunk, js.Scored, len(js.Chunks))
	}
	if js.PPL <= 1 || js.PPL != js.Chunks[5].PPL || js.Unc <= 0 {
		t.Errorf("PPL %g +/- %g, last chunk %g", js.PPL, js.Unc, js.Chunks[5].PPL)
	}
}

// TestPerplexityCommandErrors checks that bad input gives one clear error line.
func TestPerplexityCommandErrors(t *testing.T) {
	dir := t.TempDir()
	empty, short := filepath.Join(dir, "empty.txt"), filepath.Join(dir, "short.txt")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(short, []byte(strings.Repeat("Once upon a time. ", 10)), 0o644)
	model := testdata.Path(t, "stories260K-F32.gguf")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-m", model, "-f", empty}, "empty.txt: the file is empty"},
		{[]string{"-m", model, "-f", short, "-c", "128"}, "need at least 256 tokens for a context of 128; the text has 52"},
		{[]string{"-m", model, "--kl-divergence"}, "--kl-divergence needs --kl-divergence-base"},
		{[]string{"-m", model, "-f", short, "--kl-divergence", "--kl-divergence-base", "x"}, "drop -f"},
		{[]string{"-m", model, "--kl-divergence", "--kl-divergence-base", filepath.Join(dir, "none.kld")}, "none.kld: no such file"},
		{[]string{"-m", model, "--kl-divergence", "--kl-divergence-base", short}, "no _logits_ magic"},
		{[]string{"-m", model, "-f", short, "-b", "0"}, "-b must be positive"},
		{[]string{"-m", model, "--kl-divergence", "--kl-divergence-base", testdata.Path(t, "kld/stories260K-F32.kld"), "-c", "64"},
			"-c 64 conflicts with the context of 128 of the base file"},
	}
	for _, tt := range tests {
		_, _, err := runPPL(t, context.Background(), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line mentioning %q", tt.args, err, tt.want)
		}
	}
}

// TestPerplexityCancelled cancels a run that writes a base file: the error is the
// context's and no file (partial or temporary) is left.
func TestPerplexityCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := runPPL(t, ctx, "-m", testdata.Path(t, "stories260K-F32.gguf"), "-f", testdata.Path(t, "tinyshakespeare.txt"),
		"-c", "64", "--chunks", "4", "--kl-divergence-base", filepath.Join(dir, "base.kld"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestPerplexityMicroBatchFlag checks that the passes' micro-batch is left to the model
// (0: the whole pass on one device) unless -ub is given, even as llama.cpp's 512.
func TestPerplexityMicroBatchFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-m", "x.gguf", "-f", "t.txt"}, 0},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-ub", "512"}, 512},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-b", "1024", "-ub", "256"}, 256},
	} {
		fs, pc := perplexityFlags(io.Discard)
		if help, err := pc.parse(fs, c.args); help || err != nil {
			t.Fatalf("%q: help %v, %v", c.args, help, err)
		}
		if got := pc.options().MicroBatch; got != c.want {
			t.Errorf("%q: micro-batch %d, want %d", c.args, got, c.want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/infergo/infer/tensor"
)

// tsCell matches a t/s cell: mean ± standard deviation.
var tsCell = regexp.MustCompile(`^([0-9]+\.[0-9]{2}) ± ([0-9]+\.[0-9]{2})$`)

// TestBenchTable runs 'infer bench' on a synthesized tiny model and checks that the
// llama-bench table is complete: header, rule, one row per test with a positive rate,
// and the build footer.
func TestBenchTable(t *testing.T) {
	path := synthTiny(t, "Q8_0")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "-m", path, "-p", "16", "-n", "4", "-r", "2", "-t", "2"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want header, rule, 2 rows, blank, build:\n%s", len(lines), stdout.String())
	}
	header := cells(lines[0])
	if strings.Join(header, ",") != "model,size,params,backend,threads,test,t/s" {
		t.Errorf("header %q", header)
	}
	for i, test := range []string{"pp16", "tg4"} {
		row := cells(lines[2+i])
		want := []string{"llama ?B Q8_0", "1.47 MiB", "1.44 M", "CPU " + tensor.Level().String(), "2", test}
		if len(row) != 7 || strings.Join(row[:6], ",") != strings.Join(want, ",") {
			t.Errorf("row %d = %q, want %q + t/s", i, row, want)
			continue
		}
		m := tsCell.FindStringSubmatch(row[6])
		if mean, _ := strconv.ParseFloat(m[min(1, len(m)-1)], 64); m == nil || mean <= 0 {
			t.Errorf("row %d: t/s %q", i, row[6])
		}
	}
	if !strings.HasPrefix(lines[5], "build: infer ") {
		t.Errorf("footer %q", lines[5])
	}
}

// cells splits a markdown table line into trimmed cells.
func cells(line string) []string {
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// TestBenchDepthTable checks -d on a tiny model: every test again after that many
// tokens in the cache, named as llama-bench names it, and the n_batch and n_ubatch
// columns llama-bench shows when -b and -ub are not its defaults.
func TestBenchDepthTable(t *testing.T) {
	path := synthTiny(t, "Q4_0")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "-m", path, "-p", "16", "-n", "4", "-d", "0,24", "-b", "8", "-ub", "4", "-r", "1", "-t", "1"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines, want header, rule, 4 rows, blank, build:\n%s", len(lines), stdout.String())
	}
	if h := strings.Join(cells(lines[0]), ","); h != "model,size,params,backend,threads,n_batch,n_ubatch,test,t/s" {
		t.Errorf("header %q", h)
	}
	for i, test := range []string{"pp16", "tg4", "pp16 @ d24", "tg4 @ d24"} {
		row := cells(lines[2+i])
		if len(row) != 9 || strings.Join(row[4:8], ",") != "1,8,4,"+test || tsCell.FindStringSubmatch(row[8]) == nil {
			t.Errorf("row %d = %q, want threads 1, n_batch 8, n_ubatch 4, test %s", i, row, test)
		}
	}
	for _, l := range lines[:6] { // every line as wide as the header
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("line %q: %d runes, header %d", l, len([]rune(l)), len([]rune(lines[0])))
		}
	}
}

// TestBenchJSON checks -o json: one object per test with llama-bench's fields.
func TestBenchJSON(t *testing.T) {
	path := synthTiny(t, "F16")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "-m", path, "-p", "8,16", "-n", "0", "-r", "2", "-t", "1", "-o", "json", "--no-warmup"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rows []struct {
		NPrompt   int       `json:"n_prompt"`
		NGen      int       `json:"n_gen"`
		NDepth    int       `json:"n_depth"`
		NBatch    int       `json:"n_batch"`
		NUBatch   int       `json:"n_ubatch"`
		Backends  string    `json:"backends"`
		CPULevel  string    `json:"cpu_level"`
		Threads   int       `json:"n_threads"`
		AvgTS     float64   `json:"avg_ts"`
		SamplesNS []int64   `json:"samples_ns"`
		SamplesTS []float64 `json:"samples_ts"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(rows) != 2 || rows[0].NPrompt != 8 || rows[1].NPrompt != 16 || rows[1].Threads != 1 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.NGen != 0 || r.AvgTS <= 0 || len(r.SamplesNS) != 2 || len(r.SamplesTS) != 2 {
			t.Errorf("row %+v", r)
		}
		// llama-bench's defaults, -b 2048 and -ub 512, depth 0; the CPU kernels in use.
		if r.NBatch != 2048 || r.NUBatch != 512 || r.NDepth != 0 || r.Backends != "CPU" || r.CPULevel != tensor.Level().String() {
			t.Errorf("row %+v: want n_batch 2048, n_ubatch 512, n_depth 0, backends CPU, cpu_level %s", r, tensor.Level())
		}
	}
}

// TestBenchJSONDepth checks n_depth and the given -b and -ub in -o json.
func TestBenchJSONDepth(t *testing.T) {
	path := synthTiny(t, "F32")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "-m", path, "-p", "8", "-n", "2", "--n-depth", "16", "-b", "4", "-ub", "2", "-r", "1", "-t", "1", "-o", "json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(rows) != 2 || rows[0]["n_prompt"] != 8.0 || rows[1]["n_gen"] != 2.0 {
		t.Fatalf("rows %v", rows)
	}
	for _, r := range rows {
		if r["n_depth"] != 16.0 || r["n_batch"] != 4.0 || r["n_ubatch"] != 2.0 {
			t.Errorf("row %v: want n_depth 16, n_batch 4, n_ubatch 2", r)
		}
	}
}

// TestBenchErrors checks command-line errors and the GPU-only requests.
func TestBenchErrors(t *testing.T) {
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"transfer"}, false, "needs CUDA devices"},
		{[]string{"-m", "x.gguf", "-ngl", "99"}, false, "needs CUDA devices"},
		{[]string{"-m", "x.gguf", "-ts", "1/1"}, false, "needs CUDA devices"},
		{[]string{"-p", "16"}, true, "-m"},
		{[]string{"-m", "x.gguf", "-o", "csv"}, true, "md or json"},
		{[]string{"-m", "x.gguf", "-p", "a,b"}, true, "not a list of integers"},
		{[]string{"-m", "x.gguf", "-sm", "row"}, true, "none or layer"},
		{[]string{"-m", "x.gguf", "-ts", "3:1"}, true, "ratios"},
		{[]string{"-m", "x.gguf", "-p", "0", "-n", "0"}, true, "no tests"},
		{[]string{"-m", "x.gguf", "-t", "0"}, true, "at least 1"},
		{[]string{"-m", "x.gguf", "-d", "0,-5"}, true, "depth -5 is negative"},
		{[]string{"-m", "x.gguf", "-d", "x"}, true, "not a list of integers"},
		{[]string{"-m", "x.gguf", "-b", "0"}, true, "at least 1"},
		{[]string{"-m", "/nonexistent.gguf", "-p", "1", "-n", "0"}, false, "nonexistent"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"bench"}, tt.args...), &stdout, &stderr)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &ue) != tt.usage {
			t.Errorf("bench %v: %v (usage error %v), want %q (usage %v)", tt.args, err, errors.As(err, &ue), tt.want, tt.usage)
		}
	}
}

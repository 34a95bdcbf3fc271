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
		want := []string{"llama ?B Q8_0", "1.47 MiB", "1.44 M", "CPU", "2", test}
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

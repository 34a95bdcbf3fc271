package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/model"
)

// TestUsageErrors checks that bad command lines fail with a usage error naming the
// problem, before any model is loaded.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "-p", "hi"}, "-m: a model file is required"},
		{[]string{"run", "-m", "x.gguf"}, "-p: a prompt is required"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-ctk", "q8_0"}, `-ctk "q8_0": want f16 or f32`},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-ctk", "f32"}, "K and V cache types must match"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-c", "-3"}, "must not be negative"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "--wire", "q8_0"}, `wire format "q8_0": want f32 or f16`},
		{[]string{"perplexity", "-m", "x.gguf", "-f", "t.txt", "--wire", "f8"}, `wire format "f8": want f32 or f16`},
		{[]string{"bench", "-m", "x.gguf", "--wire", "bf16"}, `wire format "bf16": want f32 or f16`},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "--temp", "warm"}, `"warm" is not a number`},
		{[]string{"run", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"perplexity", "-m", "x.gguf"}, "-f: a text file is required"},
		{[]string{"perplexity", "-m", "x.gguf", "-f", "t.txt", "-c", "0"}, "-c must be positive"},
		{[]string{"perplexity", "-f", "t.txt"}, "-m: a model file is required"},
		{[]string{"tokenize", "-p", "hi"}, "-m: a model file is required"},
		{[]string{"tokenize", "-m", "x.gguf", "-n", "3"}, "flag provided but not defined: -n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a usage error containing %q", err, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"run", "perplexity", "tokenize"} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{cmd, "-h"}, &stdout, &stderr); err != nil {
			t.Errorf("%s -h: %v", cmd, err)
		}
		if !strings.Contains(stderr.String(), "-m file") || stdout.Len() != 0 {
			t.Errorf("%s -h printed stdout %q, stderr %q", cmd, stdout.String(), stderr.String())
		}
	}
}

func TestModelFlagOptions(t *testing.T) {
	f := &modelFlags{path: "m.gguf", ctx: 128, batch: 64, threads: 2, ctk: "F32", ctv: "f32"}
	opts, err := f.options(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.ContextSize != 128 || opts.BatchSize != 64 || opts.Threads != 2 || opts.KVType != model.KVCacheF32 || opts.Logf != nil ||
		opts.Wire != model.WireF32 {
		t.Errorf("options %+v", opts)
	}
	var log bytes.Buffer
	f.ctk, f.ctv = "f16", "f16"
	if opts, err = f.options(&log); err != nil || opts.KVType != model.KVCacheF16 || opts.Logf == nil {
		t.Fatalf("options %+v, %v", opts, err)
	}
	opts.Logf("loaded %d tensors", 48)
	if log.String() != "loaded 48 tensors\n" {
		t.Errorf("Logf wrote %q", log.String())
	}
}

// TestWireFlag checks that --wire reaches model.Options through the shared flags,
// defaulting to the exact f32 wire.
func TestWireFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want model.WireFormat
	}{
		{nil, model.WireF32},
		{[]string{"--wire", "f16"}, model.WireF16},
		{[]string{"-wire=F32"}, model.WireF32},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := addModelFlags(fs, modelDefaults{})
		if _, err := parseFlags(fs, append([]string{"-m", "m.gguf"}, tt.args...)); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if opts, err := f.options(nil); err != nil || opts.Wire != tt.want {
			t.Errorf("%q: Wire %v, %v; want %v", tt.args, opts.Wire, err, tt.want)
		}
	}
}

// TestParseByteSize checks --weight-cache sizes, bad ones, and that String reads back.
func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"4096", 4096}, {"16G", 16 << 30}, {"16g", 16 << 30}, {"16GiB", 16 << 30}, {"16GB", 16 << 30},
		{"512M", 512 << 20}, {"1.5G", 3 << 29}, {"2T", 2 << 40}, {"64K", 64 << 10}, {"100B", 100}, {" 40G ", 40 << 30},
	}
	for _, tt := range tests {
		if got, err := parseByteSize(tt.in); err != nil || got != tt.want {
			t.Errorf("parseByteSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "16X", "16GiBs", "iB", "NaN", "1e30T", "16 G B"} {
		if got, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", bad, got)
		}
	}
	for _, v := range []byteSize{0, 16 << 30, 512 << 20, 3 << 29, 1000} {
		var back byteSize
		if err := back.Set(v.String()); err != nil || back != v {
			t.Errorf("byteSize %d printed %q, read back %d, %v", int64(v), v.String(), int64(back), err)
		}
	}
}

// TestWeightCacheFlag checks that --weight-cache reaches the GPU flags of every command
// that places a model on GPUs, off by default, and that a bad size is a usage error.
func TestWeightCacheFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want byteSize
	}{{nil, 0}, {[]string{"--weight-cache", "40G"}, 40 << 30}, {[]string{"-weight-cache=0"}, 0}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var g gpuFlags
		addGPUFlags(fs, &g)
		if err := fs.Parse(tt.args); err != nil || g.weightCache != tt.want {
			t.Errorf("%v: weight cache %d, %v, want %d", tt.args, int64(g.weightCache), err, int64(tt.want))
		}
	}
	for _, args := range [][]string{
		{"run", "-m", "x.gguf", "-p", "hi", "--weight-cache", "lots"},
		{"perplexity", "-m", "x.gguf", "-f", "t.txt", "--weight-cache", "-1G"},
		{"bench", "-m", "x.gguf", "--weight-cache", "16Q"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "want bytes like 16G") {
			t.Errorf("%v: %v, want a usage error about the size", args, err)
		}
	}
}

// TestDeviceOptions checks that the device flags reach the options every CUDA device is
// opened with (placement's and a distributed rank's), off by default.
func TestDeviceOptions(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want cuda.Options
	}{
		{nil, cuda.Options{}},
		{[]string{"--weight-cache", "2G", "--kernel-dir", "/k"}, cuda.Options{WeightCacheBytes: 2 << 30, KernelDir: "/k"}},
		{[]string{"-kernel-dir=k"}, cuda.Options{KernelDir: "k"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var g gpuFlags
		addGPUFlags(fs, &g)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got := g.deviceOptions(); got != tt.want {
			t.Errorf("%v: device options %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

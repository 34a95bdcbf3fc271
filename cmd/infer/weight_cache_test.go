package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

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

package main

import (
	"context"
	"fmt"

	"github.com/infergo/infer/backend/nccl"
	"github.com/infergo/infer/bench"
	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/model"
)

// benchRank is benchModel as one rank of a multi-process pipeline: every rank joins a
// group for this model and thread count; rank 0 runs the tests and prints the rows
// (backend "CUDA xN ranks" or "CPU xN ranks"), the others serve their stage. Every rank
// runs the same command line, so they go through the models in the same order.
func benchRank(ctx context.Context, cfg dist.Config, path string, opts model.Options, tests []bench.Test, f *benchFlags, p bench.Printer) (err error) {
	mf := &modelFlags{path: path, threads: opts.Threads, gpu: f.gpu}
	rs, err := startRank(ctx, cfg, f.dist, mf, opts)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer rs.Close()
	if cfg.Rank != 0 {
		return rs.serve(ctx)
	}
	defer func() { rs.finish(err) }()
	backendName := "CPU"
	if rs.gpu != nil {
		backendName = "CUDA"
	}
	backendName += fmt.Sprintf(" x%d %s", cfg.World, transportName(rs.t))
	row := bench.Row{Backend: backendName, Threads: opts.Threads, NGL: f.gpu.ngl, SplitMode: f.gpu.sm,
		TensorSplit: f.gpu.ts, Batch: opts.BatchSize, UBatch: f.ubatch()}
	return benchTests(ctx, rs.m, path, tests, f, p, row)
}

// transportName is "nccl" or "tcp", for tables and logs.
func transportName(t dist.Transport) string {
	if _, ok := t.(*nccl.Transport); ok {
		return "nccl"
	}
	return "tcp"
}

package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/model"
)

// TestRanksGPU is the 2-process x 1-GPU check, run on a 2-GPU machine only (it skips
// unless INFER_DIST_GPU_MODEL names a model file): the logits of two ranks, one GPU
// each, with the transport NCCL picks (INFER_DIST_TRANSPORT, default auto), against
// the in-process 2-GPU split and 1 GPU, and tg128 / pp512 timings of both. Rank 1 is
// this test binary again, started by rank 0.
func TestRanksGPU(t *testing.T) {
	path := os.Getenv("INFER_DIST_GPU_MODEL")
	if path == "" {
		t.Skip("INFER_DIST_GPU_MODEL not set: the 2-GPU multi-process test runs on the GPU machine only")
	}
	transport := os.Getenv("INFER_DIST_TRANSPORT")
	if transport == "" {
		transport = "auto"
	}
	ngl := 99
	if v := os.Getenv("INFER_DIST_NGL"); v != "" { // 0: a dry run of this harness on CPUs
		ngl, _ = strconv.Atoi(v)
	}
	mf := &modelFlags{path: path, ctx: 1024, batch: 512, ctk: "f16", ctv: "f16",
		gpu: gpuFlags{ngl: ngl, sm: "layer", ts: "1/1", peer: "auto", ub: 512}}
	if r := os.Getenv("INFER_DIST_GPU_RANK"); r != "" {
		rank, _ := strconv.Atoi(r)
		serveGPURank(t, mf, rank, transport, os.Getenv("INFER_DIST_GPU_ADDR"))
		return
	}
	prompt := make([]int32, 512)
	for i := range prompt {
		prompt[i] = int32(1 + (i*7919)%500)
	}
	split2, tSplit := gpuLogits(t, mf, "0,1", prompt)
	one, _ := gpuLogits(t, mf, "0", prompt)

	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRanksGPU$", "-test.v")
	cmd.Env = append(os.Environ(), "INFER_DIST_GPU_RANK=1", "INFER_DIST_GPU_ADDR="+addr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	mopts, err := mf.options(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dist.Config{World: 2, Rank: 0, Addr: addr, ConnectTimeout: 60 * time.Second}
	rs, err := startRank(context.Background(), cfg, &distFlags{transport: transport}, mf, mopts)
	if err != nil {
		t.Fatal(err)
	}
	kind := transportName(rs.t)
	got, tRanks := evalTimed(t, rs.m, prompt)
	rs.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("rank 1: %v", err)
	}
	t.Logf("RESULT model=%s transport=%s wire=%s P2P_DISABLE=%s SHM_DISABLE=%s", path, kind, mopts.Wire,
		os.Getenv("NCCL_P2P_DISABLE"), os.Getenv("NCCL_SHM_DISABLE"))
	t.Logf("RESULT in-process 2-GPU split: pp512 %.1f t/s, tg128 %.1f t/s", tSplit.pp, tSplit.tg)
	t.Logf("RESULT 2 processes x 1 GPU:    pp512 %.1f t/s (%.3fx), tg128 %.1f t/s (%.3fx)",
		tRanks.pp, tRanks.pp/tSplit.pp, tRanks.tg, tRanks.tg/tSplit.tg)
	if i := bitDiff(got, split2); i >= 0 {
		t.Errorf("RESULT logits differ from the in-process split at %d of %d: %g vs %g", i, len(got), got[i], split2[i])
	} else {
		t.Logf("RESULT logits bit-identical to the in-process 2-GPU split (%d values)", len(got))
	}
	if i := bitDiff(got, one); i >= 0 {
		t.Errorf("RESULT logits differ from 1 GPU at %d of %d: %g vs %g", i, len(got), got[i], one[i])
	} else {
		t.Logf("RESULT logits bit-identical to 1 GPU (%d values)", len(got))
	}
}

// serveGPURank is rank's side of TestRanksGPU.
func serveGPURank(t *testing.T, mf *modelFlags, rank int, transport, addr string) {
	mopts, err := mf.options(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dist.Config{World: 2, Rank: rank, Addr: addr, ConnectTimeout: 60 * time.Second}
	rs, err := startRank(context.Background(), cfg, &distFlags{transport: transport}, mf, mopts)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if err := rs.serve(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// rates are the throughputs evalTimed measures.
type rates struct{ pp, tg float64 }

// gpuLogits loads the model in this process over the CUDA devices named and returns
// evalTimed's logits and rates.
func gpuLogits(t *testing.T, mf *modelFlags, devices string, prompt []int32) ([]float32, rates) {
	t.Helper()
	mopts, err := mf.options(nil)
	if err != nil {
		t.Fatal(err)
	}
	g := mf.gpu
	g.device = devices
	gpus, err := g.open(mf.path, &mopts)
	if err != nil {
		t.Fatal(err)
	}
	defer gpus.Close()
	m, err := model.Load(mf.path, mopts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return evalTimed(t, m, prompt)
}

// evalTimed evaluates prompt (all rows' logits) and 16 decode steps, returning those
// logits, then times pp512 (a fresh 512-token prompt, last logits only, best of 3) and
// tg128 (128 decode steps).
func evalTimed(t *testing.T, m *model.Model, prompt []int32) ([]float32, rates) {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.Eval(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	logits := slices.Clone(out)
	for i := range 16 {
		got, err := s.Eval([]int32{int32(3 + i)}, false)
		if err != nil {
			t.Fatal(err)
		}
		logits = append(logits, got...)
	}
	var r rates
	best := time.Duration(math.MaxInt64)
	for range 3 {
		s.Reset()
		start := time.Now()
		if _, err := s.Eval(prompt[:512], false); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	r.pp = 512 / best.Seconds()
	s.Reset()
	if _, err := s.Eval(prompt[:16], false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 128 {
		if _, err := s.Eval([]int32{int32(5 + i%400)}, false); err != nil {
			t.Fatal(err)
		}
	}
	r.tg = 128 / time.Since(start).Seconds()
	return logits, r
}

// bitDiff is the first index where a and b differ bitwise, or -1.
func bitDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

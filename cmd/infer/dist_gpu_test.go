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

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/backend/nccl"
	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/tensor"
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
	if i := firstDiff(got, split2); i >= 0 {
		t.Errorf("RESULT logits differ from the in-process split at %d of %d: %g vs %g", i, len(got), got[i], split2[i])
	} else {
		t.Logf("RESULT logits bit-identical to the in-process 2-GPU split (%d values)", len(got))
	}
	if i := firstDiff(got, one); i >= 0 {
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
	gm, err := g.load(context.Background(), mf.path, mopts)
	if err != nil {
		t.Fatal(err)
	}
	defer gm.Close()
	return evalTimed(t, gm.Model, prompt)
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

// TestNCCLOverlapGPU is the seed-004 check between two processes, on a 2-GPU machine
// only (it skips unless INFER_DIST_GPU_OVERLAP is set): two chunked transfers from rank
// 0's GPU to rank 1's, each chunk received by rank 1 on its own device stream (the owner
// of the destination receives), are put in flight together as one NCCL group; together
// they must take less than 0.7x the sum of each alone. Rank 1 is this test binary
// again.
func TestNCCLOverlapGPU(t *testing.T) {
	if os.Getenv("INFER_DIST_GPU_OVERLAP") == "" {
		t.Skip("INFER_DIST_GPU_OVERLAP not set: the 2-GPU overlap check runs on the GPU machine only")
	}
	rank, addr := 0, os.Getenv("INFER_DIST_GPU_ADDR")
	if os.Getenv("INFER_DIST_GPU_RANK") == "1" {
		rank = 1
	} else {
		addr = freeAddr(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestNCCLOverlapGPU$", "-test.v")
		cmd.Env = append(os.Environ(), "INFER_DIST_GPU_RANK=1", "INFER_DIST_GPU_ADDR="+addr)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
	}
	dev, err := cuda.Open(rank)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cfg := dist.Config{World: 2, Rank: rank, Addr: addr, ConnectTimeout: 60 * time.Second}
	g, err := dist.Join(context.Background(), cfg, dist.Hello{Device: dev.Name()}, func([]dist.Hello) ([]byte, []byte, error) {
		id, err := nccl.GetUniqueID()
		return nil, id[:], err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var id nccl.UniqueID
	copy(id[:], g.Welcome().Blob)
	tr, err := nccl.NewTransport(dev, 2, rank, id, g.Done(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const rows, cols, chunks = 16384, 4096, 8 // 256 MiB of F32 each, in 32 MiB chunks
	a, err := dev.Alloc(tensor.F32, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dev.Alloc(tensor.F32, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	ops := func(bufs ...backend.Buffer) []nccl.Op { // chunk by chunk, the buffers interleaved
		var out []nccl.Op
		for c := range chunks {
			for _, buf := range bufs {
				out = append(out, nccl.Op{Peer: 1 - rank, Buf: buf.Slice(c*rows/chunks, rows/chunks), Send: rank == 0})
			}
		}
		return out
	}
	// step runs one transfer: rank 1 posts its receives when rank 0 says go and answers
	// when they are done; rank 0 times its sends from the go to rank 1's answer.
	step := func(o []nccl.Op) time.Duration {
		if rank == 1 {
			if _, err := g.Command(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := tr.Batch(o); err != nil {
				t.Fatal(err)
			}
			if err := dev.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := g.SendResult([]byte("done")); err != nil {
				t.Fatal(err)
			}
			return 0
		}
		start := time.Now()
		if err := g.Broadcast([]byte("go")); err != nil {
			t.Fatal(err)
		}
		if err := tr.Batch(o); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Result(); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	best := func(o []nccl.Op) time.Duration {
		d := time.Duration(math.MaxInt64)
		for range 3 {
			d = min(d, step(o))
		}
		return d
	}
	step(ops(a, b)) // warm-up: connections
	ta, tb, both := best(ops(a)), best(ops(b)), best(ops(a, b))
	if rank == 1 {
		return
	}
	ratio := both.Seconds() / (ta + tb).Seconds()
	t.Logf("RESULT seed-004 overlap (P2P_DISABLE=%s SHM_DISABLE=%s): A alone %v, B alone %v, both in flight %v = %.2fx the sum",
		os.Getenv("NCCL_P2P_DISABLE"), os.Getenv("NCCL_SHM_DISABLE"), ta, tb, both, ratio)
	if ratio >= 0.7 {
		t.Errorf("RESULT the two transfers did not overlap: %.2fx the sum, want < 0.7", ratio)
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/backend/nccl"
	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/split"
)

// rankSetup is this process's share of a multi-process run: its membership of the
// group, the transport to its neighbours, its stage of the model and its GPU, if any.
type rankSetup struct {
	g   *dist.Group
	t   dist.Transport
	m   *model.Model
	gpu *cuda.Device
	// watchdog ends the process when the group failed but this rank is still stuck
	// (a driver call waiting on a peer that is gone) failExitAfter later.
	mu       sync.Mutex
	watchdog *time.Timer
	closed   bool
}

// failExitAfter is how long a rank whose group failed may take to stop before the
// watchdog exits the process with the group's error.
const failExitAfter = 15 * time.Second

// watch arms the watchdog when the group fails (not when it ends normally).
func (rs *rankSetup) watch(rank int) {
	rs.g.OnFail(func(err error) {
		if errors.Is(err, dist.ErrClosed) {
			return
		}
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if rs.closed {
			return
		}
		rs.watchdog = time.AfterFunc(failExitAfter, func() {
			fmt.Fprintf(os.Stderr, "infer: %v (rank %d still busy %v later; exiting)\n", err, rank, failExitAfter)
			os.Exit(1)
		})
	})
}

// rankLink is what model.LoadRank talks through: the group and the transport.
type rankLink struct {
	*dist.Group
	dist.Transport
}

// startRank joins the group cfg describes and loads this rank's stage of the model
// the flags name. Rank 0 plans the model over every rank's device (-ts weights the
// ranks); -ngl N > 0 puts each rank's stage on one GPU: --device's first ordinal, else
// $LOCAL_RANK, else the rank modulo the GPUs present.
func startRank(ctx context.Context, cfg dist.Config, df *distFlags, mf *modelFlags, mopts model.Options) (_ *rankSetup, err error) {
	path := mf.path
	file, err := dist.FileCheck(path)
	if err != nil {
		return nil, err
	}
	if cfg.MaxResult, err = model.RankResultBytes(path, mopts); err != nil {
		return nil, err
	}
	rs := &rankSetup{}
	defer func() {
		if err != nil {
			rs.Close()
		}
	}()
	threads := mopts.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	hello := dist.Hello{File: file, Device: fmt.Sprintf("rank %d: cpu (%d threads)", cfg.Rank, threads), Free: split.Unlimited,
		Options: fmt.Sprintf("-c %d -b %d -ub %d -ctk %s --wire %s", mopts.ContextSize, mopts.BatchSize, mopts.MicroBatch,
			mopts.KVType, mopts.Wire)}
	if mf.gpu.ngl > 0 {
		if rs.gpu, err = openRankGPU(mf.gpu.device, cfg.Rank, mf.gpu.deviceOptions()); err != nil {
			return nil, err
		}
		free, _, err := rs.gpu.MemInfo()
		if err != nil {
			return nil, err
		}
		hello.Device, hello.Free = fmt.Sprintf("rank %d: %s", cfg.Rank, rs.gpu.Name()), int64(free)
		mopts.Devices = append(mopts.Devices, rs.gpu)
	}
	if df.transport == "nccl" && rs.gpu == nil {
		return nil, usageError{errors.New("--transport nccl: needs a GPU stage (-ngl)")}
	}
	if rs.gpu != nil && df.transport != "tcp" {
		if err := nccl.Load(); err != nil && df.transport == "nccl" {
			return nil, err
		} else if err == nil {
			hello.NCCL = true
		}
	}
	ln, err := dist.ListenData("")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	hello.DataPort = ln.Port()
	ratios, _ := parseRatios(mf.gpu.ts)
	if rs.g, err = dist.Join(ctx, cfg, hello, planRanks(path, mopts, ratios, df.transport)); err != nil {
		return nil, err
	}
	rs.watch(cfg.Rank)
	fail := func(err error) error {
		rs.g.Fail(fmt.Errorf("rank %d: %w", cfg.Rank, err))
		return err
	}
	if rs.t, err = connect(ctx, rs.g, ln, rs.gpu); err != nil {
		return nil, fail(err)
	}
	plan, err := model.UnmarshalPlan(rs.g.Welcome().Plan)
	if err != nil {
		return nil, fail(err)
	}
	if rs.m, err = model.LoadRank(path, mopts, plan, rankLink{rs.g, rs.t}); err != nil {
		return nil, fail(err)
	}
	return rs, nil
}

// planRanks is rank 0's setup of the group: the plan of the model at path over every
// rank's device (weighted by ratios, when given) and the NCCL id, when transport allows.
func planRanks(path string, mopts model.Options, ratios []float64, transport string) dist.SetupFunc {
	return func(hs []dist.Hello) ([]byte, []byte, error) {
		devs := make([]model.RankDevice, len(hs))
		for i, h := range hs {
			devs[i] = model.RankDevice{Name: h.Device, Free: h.Free}
		}
		mopts.Split = model.SplitOptions{Ratios: ratios}
		p, err := model.PlanRanks(path, mopts, devs)
		if err != nil {
			return nil, nil, err
		}
		b, err := model.MarshalPlan(p)
		if err != nil {
			return nil, nil, err
		}
		blob, err := ncclID(transport, hs)
		return b, blob, err
	}
}

// ncclID is rank 0's choice of transport: an NCCL unique id when every rank can use
// NCCL and --transport allows it, else nil (TCP).
func ncclID(transport string, hs []dist.Hello) ([]byte, error) {
	if transport == "tcp" {
		return nil, nil
	}
	for _, h := range hs {
		if !h.NCCL {
			if transport == "nccl" {
				return nil, fmt.Errorf("--transport nccl: rank %d cannot use NCCL (no GPU stage, or no libnccl.so.2)", h.Rank)
			}
			return nil, nil
		}
	}
	id, err := nccl.GetUniqueID()
	if err != nil {
		return nil, err
	}
	return id[:], nil
}

// connect sets up the transport rank 0 chose: NCCL when the Welcome carries its id,
// else TCP between neighbours. Either aborts when the group fails.
func connect(ctx context.Context, g *dist.Group, ln *dist.DataListener, gpu *cuda.Device) (dist.Transport, error) {
	blob := g.Welcome().Blob
	if len(blob) == 0 {
		return dist.ConnectTCP(ctx, g, ln)
	}
	if gpu == nil {
		return nil, errors.New("rank 0 chose NCCL, but this rank has no GPU stage (-ngl)")
	}
	var id nccl.UniqueID
	if len(blob) != len(id) {
		return nil, fmt.Errorf("an NCCL id of %d bytes from rank 0, want %d", len(blob), len(id))
	}
	copy(id[:], blob)
	t, err := nccl.NewTransport(gpu, g.World(), g.Rank(), id, g.Done(), func(err error) {
		g.Fail(fmt.Errorf("rank %d: %w", g.Rank(), err))
	})
	if err != nil {
		return nil, err
	}
	g.OnFail(t.Abort)
	return t, nil
}

// openRankGPU opens this rank's GPU.
func openRankGPU(device string, rank int, o cuda.Options) (*cuda.Device, error) {
	n, err := cuda.Count()
	if err != nil {
		return nil, fmt.Errorf("-ngl: needs a CUDA device: %w", err)
	}
	if n == 0 {
		return nil, errors.New("-ngl: needs a CUDA device: none found")
	}
	ordinal := rank % n
	if ords, err := parseOrdinals(device); err != nil {
		return nil, usageError{err}
	} else if len(ords) > 0 {
		ordinal = ords[0]
	} else if lr, err := envInt(os.Getenv, "LOCAL_RANK", -1); err != nil {
		return nil, err
	} else if lr >= 0 {
		ordinal = lr
	}
	if ordinal >= n {
		return nil, usageError{fmt.Errorf("--device %d: this machine has %d CUDA devices", ordinal, n)}
	}
	d, err := cuda.OpenWith(ordinal, o)
	if err != nil {
		return nil, fmt.Errorf("open CUDA device %d: %w", ordinal, err)
	}
	return d, nil
}

// serve runs a rank other than 0 until rank 0 ends the run; a normal end is nil.
func (rs *rankSetup) serve(ctx context.Context) error {
	err := rs.m.Serve(ctx)
	if errors.Is(err, dist.ErrClosed) {
		return nil
	}
	if gerr := rs.g.Err(); gerr != nil && !errors.Is(gerr, dist.ErrClosed) {
		return gerr // the run failed elsewhere: say where, not how this rank's wait ended
	}
	rs.g.Fail(err)
	return err
}

// finish ends rank 0's run: normally, or telling the other ranks why not.
func (rs *rankSetup) finish(err error) error {
	if err != nil {
		rs.g.Fail(err)
	}
	return err
}

// Close releases the stage, the transport, the group (rank 0 telling the others the
// run is over) and the GPU, in that order.
func (rs *rankSetup) Close() error {
	var errs []error
	if rs.m != nil {
		errs = append(errs, rs.m.Close())
	}
	if rs.g != nil {
		rs.g.Close()
	}
	if rs.t != nil {
		rs.t.Close()
	}
	if rs.gpu != nil {
		errs = append(errs, rs.gpu.Close())
	}
	rs.mu.Lock()
	rs.closed = true
	if rs.watchdog != nil {
		rs.watchdog.Stop()
	}
	rs.mu.Unlock()
	return errors.Join(errs...)
}

// runRank is 'infer run' as one rank of a multi-process pipeline: rank 0 reads the
// prompt and prints the output, the others compute their stage until it is done.
func runRank(ctx context.Context, f *runFlags, cfg dist.Config, stdout, stderr io.Writer) error {
	if cfg.Rank == 0 && f.prompt == "" && !f.plan {
		return usageError{errors.New("run: -p: a prompt is required on rank 0")}
	}
	mopts, err := f.model.options(nil)
	if err != nil {
		return err
	}
	rs, err := startRank(ctx, cfg, f.dist, f.model, mopts)
	if err != nil {
		return err
	}
	defer rs.Close()
	if cfg.Rank != 0 {
		return rs.serve(ctx)
	}
	if f.plan {
		_, err := io.WriteString(stdout, rs.m.Plan().String())
		return rs.finish(err)
	}
	return rs.finish(f.generate(ctx, rs.m, stdout, stderr))
}

package main

import (
	"flag"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/infergo/infer/dist"
)

// distFlags place this process in a multi-process pipeline: --world N --rank R
// --coordinator HOST:PORT, or, when those flags are absent, torchrun's variables
// WORLD_SIZE, RANK, MASTER_ADDR and MASTER_PORT.
type distFlags struct {
	world          int    // --world; 0 = WORLD_SIZE, else one process
	rank           int    // --rank; -1 = RANK
	coordinator    string // --coordinator; "" = MASTER_ADDR:MASTER_PORT
	connectTimeout time.Duration
	stepTimeout    time.Duration
	transport      string // --transport: auto, tcp or nccl
}

// defaultMasterPort is torchrun's default MASTER_PORT.
const defaultMasterPort = "29500"

// addDistFlags registers the multi-process flags on fs.
func addDistFlags(fs *flag.FlagSet) *distFlags {
	d := &distFlags{}
	fs.IntVar(&d.world, "world", 0, "`ranks` (processes) of a multi-process pipeline, each owning one stage of the plan (default $WORLD_SIZE, else 1)")
	fs.IntVar(&d.rank, "rank", -1, "this process's `rank`, 0..world-1; rank 0 reads the input and prints the output (default $RANK)")
	fs.StringVar(&d.coordinator, "coordinator", "", "rank 0's `host:port`: rank 0 listens there, the others connect (default $MASTER_ADDR:$MASTER_PORT)")
	fs.DurationVar(&d.connectTimeout, "connect-timeout", dist.DefaultConnectTimeout, "how long the ranks wait for each other at the start")
	fs.DurationVar(&d.stepTimeout, "step-timeout", dist.DefaultStepTimeout, "rank 0 gives up when a batch gets no answer from the other ranks for this long (0 = never)")
	fs.StringVar(&d.transport, "transport", "auto", "hidden-state `transport` between ranks: auto (NCCL on GPUs, else TCP), tcp or nccl")
	return d
}

// resolve fills the unset flags from the environment (getenv) and checks them; it
// returns the group's configuration, or ok false for a single-process run.
func (d *distFlags) resolve(getenv func(string) string) (cfg dist.Config, ok bool, err error) {
	world, rank, addr := d.world, d.rank, d.coordinator
	if world == 0 {
		if world, err = envInt(getenv, "WORLD_SIZE", 1); err != nil {
			return cfg, false, err
		}
	}
	if world <= 1 {
		if d.rank > 0 || d.coordinator != "" {
			return cfg, false, usageError{fmt.Errorf("--rank/--coordinator need --world of 2 or more (or WORLD_SIZE)")}
		}
		return cfg, false, nil
	}
	if rank < 0 {
		if rank, err = envInt(getenv, "RANK", -1); err != nil {
			return cfg, false, err
		}
	}
	if rank < 0 || rank >= world {
		return cfg, false, usageError{fmt.Errorf("--rank %d: want 0..%d for --world %d (or set RANK)", rank, world-1, world)}
	}
	if addr == "" {
		host, port := getenv("MASTER_ADDR"), getenv("MASTER_PORT")
		if host == "" {
			return cfg, false, usageError{fmt.Errorf("--world %d: --coordinator HOST:PORT (or MASTER_ADDR) is required", world)}
		}
		if port == "" {
			port = defaultMasterPort
		}
		addr = net.JoinHostPort(host, port)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return cfg, false, usageError{fmt.Errorf("--coordinator %q: want HOST:PORT", addr)}
	}
	if d.connectTimeout <= 0 {
		return cfg, false, usageError{fmt.Errorf("--connect-timeout %v: must be positive", d.connectTimeout)}
	}
	switch d.transport {
	case "auto", "tcp", "nccl":
	default:
		return cfg, false, usageError{fmt.Errorf("--transport %q: want auto, tcp or nccl", d.transport)}
	}
	step := d.stepTimeout
	if step == 0 {
		step = -1 // 0 in the flag means no bound too
	}
	return dist.Config{World: world, Rank: rank, Addr: addr, ConnectTimeout: d.connectTimeout, StepTimeout: step}, true, nil
}

// envInt reads an integer environment variable, def when it is unset.
func envInt(getenv func(string) string, name string, def int) (int, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, usageError{fmt.Errorf("%s=%q: not an integer", name, s)}
	}
	return v, nil
}

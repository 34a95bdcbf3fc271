package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/infergo/infer/backend/cuda"
)

// cmdDevices implements 'infer devices': one line per CUDA device with its name, memory
// and compute capability. Without a CUDA driver it says so and fails.
func cmdDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer devices\n\nList the CUDA devices: name, memory, compute capability.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() != 0 {
		return usageError{fmt.Errorf("devices: unexpected argument %q", fs.Arg(0))}
	}
	infos, err := cuda.Devices()
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	fmt.Fprintln(stdout, "cpu      (always available)")
	for _, in := range infos {
		fmt.Fprintf(stdout, "cuda:%-3d %-24s %7.1f GiB (%.1f free)  compute %d.%d  %d SMs  VMM %s\n",
			in.Ordinal, in.Name, gib(in.TotalMemory), gib(in.FreeMemory), in.Major, in.Minor, in.SMs, yesNo(in.VMM))
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no CUDA devices")
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

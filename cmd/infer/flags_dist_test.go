package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infergo/infer/internal/testdata"
)

func TestDistFlagsResolve(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		ok      bool
		world   int
		rank    int
		addr    string
		wantErr string
	}{
		{name: "single process", args: nil},
		{name: "world 1", args: []string{"--world", "1"}},
		{name: "flags", args: []string{"--world", "2", "--rank", "1", "--coordinator", "10.0.0.1:7000"}, ok: true, world: 2, rank: 1, addr: "10.0.0.1:7000"},
		{name: "torchrun variables", env: map[string]string{"WORLD_SIZE": "4", "RANK": "3", "MASTER_ADDR": "node0", "MASTER_PORT": "1234"},
			ok: true, world: 4, rank: 3, addr: "node0:1234"},
		{name: "default master port", env: map[string]string{"WORLD_SIZE": "2", "RANK": "0", "MASTER_ADDR": "node0"},
			ok: true, world: 2, rank: 0, addr: "node0:29500"},
		{name: "flags win over variables", args: []string{"--world", "2", "--rank", "0", "--coordinator", "h:1"},
			env: map[string]string{"WORLD_SIZE": "8", "RANK": "5", "MASTER_ADDR": "x"}, ok: true, world: 2, rank: 0, addr: "h:1"},
		{name: "rank out of range", args: []string{"--world", "2", "--rank", "2", "--coordinator", "h:1"}, wantErr: "--rank 2: want 0..1"},
		{name: "no rank", args: []string{"--world", "2", "--coordinator", "h:1"}, wantErr: "--rank -1"},
		{name: "no coordinator", args: []string{"--world", "2", "--rank", "0"}, wantErr: "--coordinator HOST:PORT (or MASTER_ADDR) is required"},
		{name: "bad coordinator", args: []string{"--world", "2", "--rank", "0", "--coordinator", "nohost"}, wantErr: "want HOST:PORT"},
		{name: "bad WORLD_SIZE", env: map[string]string{"WORLD_SIZE": "two"}, wantErr: `WORLD_SIZE="two": not an integer`},
		{name: "rank without world", args: []string{"--rank", "1"}, wantErr: "need --world of 2 or more"},
		{name: "bad transport", args: []string{"--world", "2", "--rank", "0", "--coordinator", "h:1", "--transport", "mpi"}, wantErr: `--transport "mpi"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			d := addDistFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, ok, err := d.resolve(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.ok {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if ok && (cfg.World != tt.world || cfg.Rank != tt.rank || cfg.Addr != tt.addr) {
				t.Errorf("got %+v", cfg)
			}
		})
	}
}

// freeAddr returns a loopback address with a port nobody listens on (for a moment).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runRanks runs 'infer run' once per rank with args and the rank flags, concurrently,
// and returns each rank's stdout, stderr and error.
func runRanks(t *testing.T, world int, args []string) ([]string, []string, []error) {
	t.Helper()
	addr := freeAddr(t)
	outs, errouts, errs := make([]string, world), make([]string, world), make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			a := append([]string{"run"}, args...)
			a = append(a, "--world", itoa(world), "--rank", itoa(r), "--coordinator", addr, "--connect-timeout", "10s")
			errs[r] = run(context.Background(), a, &stdout, &stderr)
			outs[r], errouts[r] = stdout.String(), stderr.String()
		})
	}
	wg.Wait()
	return outs, errouts, errs
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRunTwoRanksMatchesOneProcess(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	args := []string{"-m", path, "-p", "Once upon a time", "-n", "40", "--temp", "0", "-c", "256", "-t", "1", "-b", "16", "-ub", "4", "--json"}
	var want bytes.Buffer
	if err := run(context.Background(), append([]string{"run"}, args...), &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	outs, errouts, errs := runRanks(t, 2, args)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, errouts[r])
		}
	}
	if outs[0] != want.String() {
		t.Errorf("rank 0 printed %q\none process printed %q", outs[0], want.String())
	}
	if outs[1] != "" {
		t.Errorf("rank 1 printed %q, want nothing", outs[1])
	}
}

func TestRunRankAloneGivesUp(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	addr := freeAddr(t)
	for _, rank := range []string{"0", "1"} {
		start := time.Now()
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"run", "-m", path, "-p", "x", "--world", "2", "--rank", rank,
			"--coordinator", addr, "--connect-timeout", "500ms"}, io.Discard, &stderr)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Fatalf("rank %s: %v, want one error line", rank, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("rank %s gave up after %v", rank, d)
		}
		t.Logf("rank %s alone: %v", rank, err)
	}
}

func TestPerplexityTwoRanksMatchesOneProcess(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Lily and Tom went to the park to play with a red ball. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", path, "-f", text, "-c", "64", "-b", "32", "-ub", "8", "-t", "1"}
	var want bytes.Buffer
	if err := run(context.Background(), append([]string{"perplexity"}, args...), &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	outs, errs := make([]bytes.Buffer, 2), make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			a := []string{"perplexity", "-m", path, "-c", "64", "-b", "32", "-ub", "8", "-t", "1",
				"--world", "2", "--rank", strconv.Itoa(r), "--coordinator", addr}
			if r == 0 { // only rank 0 reads the text
				a = append(a, "-f", text)
			}
			errs[r] = run(context.Background(), a, &outs[r], io.Discard)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if outs[0].String() != want.String() || !strings.Contains(want.String(), "Final estimate") {
		t.Errorf("rank 0 printed %q\none process printed %q", outs[0].String(), want.String())
	}
	if outs[1].Len() != 0 {
		t.Errorf("rank 1 printed %q", outs[1].String())
	}
}

// TestKLDTwoRanksMatchesOneProcess: --kl-divergence over two processes takes the
// context from the base file as one process does (the default -c 512 would not fit
// a 64-token base file's chunks), and prints the same table and statistics. Rank 1
// either has the same flags or the base file's -c; a -c that contradicts the base
// file is refused.
func TestKLDTwoRanksMatchesOneProcess(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	dir := t.TempDir()
	text, base := filepath.Join(dir, "text.txt"), filepath.Join(dir, "base.kld")
	if err := os.WriteFile(text, []byte(strings.Repeat("Lily and Tom went to the park to play with a red ball. ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"perplexity", "-m", path, "-f", text, "-c", "64", "--chunks", "4", "-t", "1",
		"--kl-divergence-base", base}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	kld := []string{"perplexity", "-m", testdata.Path(t, "stories260K-Q4_0.gguf"), "--kl-divergence-base", base, "--kl-divergence", "-t", "1", "-ub", "16"}
	var want bytes.Buffer
	if err := run(context.Background(), append(kld, "-b", "64"), &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want.String(), "KL divergence statistics") {
		t.Fatalf("one process printed %q", want.String())
	}
	for _, tt := range []struct {
		name  string
		rank1 []string // rank 1's arguments after the rank flags
	}{
		{"same flags", kld},
		{"rank 1 with -c", []string{"perplexity", "-m", testdata.Path(t, "stories260K-Q4_0.gguf"), "-c", "64", "-t", "1", "-ub", "16"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			outs, errs := make([]bytes.Buffer, 2), make([]error, 2)
			var wg sync.WaitGroup
			for r := range 2 {
				wg.Go(func() {
					a := kld
					if r == 1 {
						a = tt.rank1
					}
					a = append(slices.Clip(a), "--world", "2", "--rank", strconv.Itoa(r), "--coordinator", addr, "--connect-timeout", "10s")
					errs[r] = run(context.Background(), a, &outs[r], io.Discard)
				})
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if outs[0].String() != want.String() {
				t.Errorf("rank 0 printed\n%s\none process printed\n%s", outs[0].String(), want.String())
			}
			if outs[1].Len() != 0 {
				t.Errorf("rank 1 printed %q", outs[1].String())
			}
		})
	}
	// A -c that contradicts the base file fails before any rank waits for another.
	err := run(context.Background(), append(slices.Clip(kld), "-c", "128", "--world", "2", "--rank", "0", "--coordinator", freeAddr(t),
		"--connect-timeout", "10s"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-c 128 conflicts with the context of 64 of the base file") {
		t.Errorf("rank 0 with -c 128: %v", err)
	}
}

func TestRunRanksPlan(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	outs, errouts, errs := runRanks(t, 2, []string{"-m", path, "--plan", "-t", "1", "-ts", "2/1"})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, errouts[r])
		}
	}
	lines := strings.Split(strings.TrimSpace(outs[0]), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "rank 0: cpu") || !strings.Contains(lines[1], "0-3") ||
		!strings.Contains(lines[2], "rank 1: cpu") || !strings.Contains(lines[2], "4-4+out") {
		t.Errorf("rank 0 printed\n%s", outs[0])
	}
	if outs[1] != "" {
		t.Errorf("rank 1 printed %q", outs[1])
	}
}

func TestBenchTwoRanks(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	addr := freeAddr(t)
	outs, errs := make([]bytes.Buffer, 2), make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			errs[r] = run(context.Background(), []string{"bench", "-m", path, "-p", "32", "-n", "8", "-r", "1", "-t", "1", "-ub", "16",
				"--world", "2", "--rank", strconv.Itoa(r), "--coordinator", addr}, &outs[r], io.Discard)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if got := outs[0].String(); strings.Count(got, "CPU x2 tcp") != 2 || strings.Count(got, "| n_ubatch |") != 1 ||
		strings.Count(got, "|       16 |") != 2 || !strings.Contains(got, "pp32") || !strings.Contains(got, "tg8") {
		t.Errorf("rank 0 printed\n%s", got)
	}
	if outs[1].Len() != 0 {
		t.Errorf("rank 1 printed %q", outs[1].String())
	}
}

func TestRunRanksRefuseDifferentSettings(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	addr := freeAddr(t)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, ctx := range []string{"256", "128"} {
		wg.Go(func() {
			errs[r] = run(context.Background(), []string{"run", "-m", path, "-p", "x", "-c", ctx, "-t", "1",
				"--world", "2", "--rank", strconv.Itoa(r), "--coordinator", addr, "--connect-timeout", "5s"}, io.Discard, io.Discard)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), `rank 1 was started with "-c 128`) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

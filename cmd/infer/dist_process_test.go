package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infergo/infer/internal/testdata"
)

// rankArgsEnv, when set in this test binary's environment, makes it run 'infer' with
// those arguments (separated by \x1f) instead of the tests: a rank in its own process.
const rankArgsEnv = "INFER_TEST_RUN_ARGS"

func TestMain(m *testing.M) {
	if a := os.Getenv(rankArgsEnv); a != "" {
		if err := run(context.Background(), strings.Split(a, "\x1f"), os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString("infer: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startRankProcess runs 'infer args...' in a child process of the test binary.
func startRankProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), rankArgsEnv+"="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stderr
}

// TestRunRankProcessKilled kills rank 1's process mid-generation: rank 0 must end with
// one clear error line soon after, not hang.
func TestRunRankProcessKilled(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	addr := freeAddr(t)
	common := []string{"run", "-m", path, "-p", "Once upon a time", "-n", "2000", "-c", "2048", "--temp", "1.5",
		"--seed", "1", "-t", "1", "--world", "2", "--coordinator", addr, "--connect-timeout", "20s"}
	child, childErr := startRankProcess(t, append(common, "--rank", "1")...)
	// Rank 0 streams into a writer that kills rank 1 once some tokens have come out.
	killed := make(chan time.Time, 1)
	out := &killAfter{n: 200, kill: func() {
		child.Process.Signal(syscall.SIGKILL)
		killed <- time.Now()
	}}
	err := run(context.Background(), append(common, "--rank", "0"), out, io.Discard)
	end := time.Now()
	var at time.Time
	select {
	case at = <-killed:
	default:
		t.Fatalf("rank 0 ended before rank 1 was killed: %v\nrank 1: %s", err, childErr)
	}
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "lost rank 1") {
		t.Fatalf("rank 0: %v, want one line about losing rank 1", err)
	}
	if d := end.Sub(at); d > 5*time.Second {
		t.Errorf("rank 0 took %v after the kill", d)
	}
	t.Logf("rank 0 ended %v after the kill: %v", end.Sub(at).Round(time.Millisecond), err)
}

// killAfter is a writer that calls kill once, after n bytes.
type killAfter struct {
	n    int
	seen int
	kill func()
}

func (k *killAfter) Write(p []byte) (int, error) {
	k.seen += len(p)
	if k.seen >= k.n && k.kill != nil {
		k.kill()
		k.kill = nil
	}
	return len(p), nil
}

// TestRunCancelOnRank0StopsRankProcess cancels rank 0 mid-generation (Ctrl-C): rank 1,
// in its own process, must exit non-zero with the reason.
func TestRunCancelOnRank0StopsRankProcess(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	addr := freeAddr(t)
	common := []string{"run", "-m", path, "-p", "Once upon a time", "-n", "2000", "-c", "2048", "--temp", "1.5",
		"--seed", "1", "-t", "1", "--world", "2", "--coordinator", addr, "--connect-timeout", "20s"}
	child, childErr := startRankProcess(t, append(common, "--rank", "1")...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &killAfter{n: 200, kill: cancel}
	if err := run(ctx, append(common, "--rank", "0"), out, io.Discard); err == nil {
		t.Fatal("rank 0: no error after cancel")
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(childErr.String(), "rank 0 aborted the run") || strings.Count(strings.TrimSpace(childErr.String()), "\n") != 0 {
			t.Errorf("rank 1: exit %v, stderr %q", err, childErr)
		}
		t.Logf("rank 1: %s", strings.TrimSpace(childErr.String()))
	case <-time.After(5 * time.Second):
		t.Fatal("rank 1 still running 5 s after rank 0 was cancelled")
	}
}

// TestRunRankProcessesMatchOneProcess runs rank 1 in its own process: rank 0 prints
// exactly what one process prints, and rank 1 exits cleanly.
func TestRunRankProcessesMatchOneProcess(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	args := []string{"run", "-m", path, "-p", "Once upon a time", "-n", "48", "--temp", "0.8", "--seed", "7",
		"-c", "256", "-t", "1", "-b", "8", "-ub", "3", "--json"}
	var want bytes.Buffer
	if err := run(context.Background(), args, &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ranked := append(args, "--world", "2", "--coordinator", addr, "--connect-timeout", "20s")
	child, childErr := startRankProcess(t, append(ranked, "--rank", "1")...)
	var got bytes.Buffer
	if err := run(context.Background(), append(ranked, "--rank", "0"), &got, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Errorf("rank 1: %v: %s", err, childErr)
	}
	if got.String() != want.String() {
		t.Errorf("2 processes printed %q\none process printed %q", got.String(), want.String())
	}
}

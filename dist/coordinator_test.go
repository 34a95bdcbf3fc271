package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testConfig is a fast configuration for world ranks on a loopback listener.
func testConfig(t *testing.T, world int) (Config, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return Config{World: world, Addr: ln.Addr().String(), ConnectTimeout: 2 * time.Second,
		Heartbeat: 50 * time.Millisecond}, ln
}

var testFile = FileID{Size: 1234, HeaderHash: "abcd"}

// joinAll starts ranks [0, world) except those in skip, each in a goroutine, and returns
// their groups and errors in rank order.
func joinAll(ctx context.Context, cfg Config, ln net.Listener, hello func(r int) Hello, skip ...int) ([]*Group, []error) {
	gs, errs := make([]*Group, cfg.World), make([]error, cfg.World)
	var wg sync.WaitGroup
	for r := range cfg.World {
		if containsInt(skip, r) {
			continue
		}
		c := cfg
		c.Rank = r
		if r == 0 {
			c.Listener = ln
		}
		wg.Go(func() {
			gs[r], errs[r] = Join(ctx, c, hello(r), func(hs []Hello) ([]byte, []byte, error) {
				var names []string
				for _, h := range hs {
					names = append(names, h.Device)
				}
				return []byte(strings.Join(names, ",")), []byte("blob"), nil
			})
		})
	}
	wg.Wait()
	return gs, errs
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func sameFile(r int) Hello { return Hello{File: testFile, Device: fmt.Sprintf("dev%d", r)} }

func TestJoinExchangesPlanCommandsAndResults(t *testing.T) {
	cfg, ln := testConfig(t, 3)
	gs, errs := joinAll(context.Background(), cfg, ln, sameFile)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, g := range gs {
		w := g.Welcome()
		if string(w.Plan) != "dev0,dev1,dev2" || string(w.Blob) != "blob" || len(w.Hellos) != 3 || w.Hellos[2].Rank != 2 {
			t.Errorf("rank %d: welcome %+v", r, w)
		}
	}
	if err := gs[0].Broadcast([]byte("step")); err != nil {
		t.Fatal(err)
	}
	for r := 1; r < 3; r++ {
		c, err := gs[r].Command(context.Background())
		if err != nil || string(c) != "step" {
			t.Fatalf("rank %d: command %q, %v", r, c, err)
		}
	}
	if err := gs[2].SendResult([]byte("logits")); err != nil {
		t.Fatal(err)
	}
	if res, err := gs[0].Result(); err != nil || string(res) != "logits" {
		t.Fatalf("result %q, %v", res, err)
	}
	time.Sleep(6 * cfg.Heartbeat) // longer than the lost interval: heartbeats keep everyone alive
	if err := gs[0].Broadcast([]byte("last")); err != nil {
		t.Fatal(err)
	}
	gs[0].Close()
	for r := 1; r < 3; r++ {
		if c, err := gs[r].Command(context.Background()); err != nil || string(c) != "last" {
			t.Fatalf("rank %d: command %q, %v", r, c, err)
		}
		if _, err := gs[r].Command(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("rank %d after close: %v, want ErrClosed", r, err)
		}
		gs[r].Close()
	}
}

// within fails t unless f returns within d, and returns its error.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	start := time.Now()
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		t.Logf("returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
		return nil
	}
}

func TestRankThatNeverConnects(t *testing.T) {
	cfg, ln := testConfig(t, 3)
	cfg.ConnectTimeout = 300 * time.Millisecond
	var errs []error
	within(t, 3*time.Second, func() error {
		_, errs = joinAll(context.Background(), cfg, ln, sameFile, 2)
		return nil
	})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank(s) [2] did not connect") {
		t.Errorf("rank 0: %v", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "coordinator gave up") || !strings.Contains(errs[1].Error(), "[2] did not connect") {
		t.Errorf("rank 1: %v", errs[1])
	}
}

func TestFollowerAlone(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	ln.Close() // nobody listens
	cfg.Rank, cfg.ConnectTimeout = 1, 300*time.Millisecond
	err := within(t, 3*time.Second, func() error {
		_, err := Join(context.Background(), cfg, sameFile(1), nil)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "could not reach the coordinator") {
		t.Errorf("got %v", err)
	}
}

func TestJoinRejectsMismatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hello func(r int) Hello
		want  string
	}{
		{"file", func(r int) Hello {
			h := sameFile(r)
			if r == 1 {
				h.File.HeaderHash = "ffff"
			}
			return h
		}, "rank 1 loaded a different model file"},
		{"options", func(r int) Hello {
			h := sameFile(r)
			if r == 1 {
				h.Options = "-c 512"
			}
			return h
		}, `rank 1 was started with "-c 512", rank 0 with ""`},
		{"size", func(r int) Hello {
			h := sameFile(r)
			if r == 1 {
				h.File.Size++
			}
			return h
		}, "rank 1 loaded a different model file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ln := testConfig(t, 2)
			_, errs := joinAll(context.Background(), cfg, ln, tc.hello)
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("rank %d: %v, want %q", r, err, tc.want)
				}
			}
		})
	}
}

func TestJoinRejectsWorldMismatch(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	cfg.ConnectTimeout = time.Second
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		c := cfg
		c.Listener = ln
		_, errs[0] = Join(context.Background(), c, sameFile(0), nil)
	})
	wg.Go(func() {
		c := cfg
		c.Rank, c.World = 1, 3
		_, errs[1] = Join(context.Background(), c, sameFile(1), nil)
	})
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "world of 3, rank 0 with 2") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// started joins a world of 3 and fails the test if any rank fails.
func started(t *testing.T, ctx context.Context) []*Group {
	t.Helper()
	cfg, ln := testConfig(t, 3)
	gs, errs := joinAll(ctx, cfg, ln, sameFile)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, g := range gs {
			g.Close()
		}
	})
	return gs
}

func TestRankDiesMidRun(t *testing.T) {
	gs := started(t, context.Background())
	gs[1].peers[0].conn.Close() // rank 1's process is gone: its socket closes, no abort
	err := within(t, 2*time.Second, func() error { _, err := gs[0].Result(); return err })
	if err == nil || !strings.Contains(err.Error(), "lost rank 1") {
		t.Errorf("rank 0: %v", err)
	}
	err = within(t, 2*time.Second, func() error { _, err := gs[2].Command(context.Background()); return err })
	if err == nil || !strings.Contains(err.Error(), "lost rank 1") {
		t.Errorf("rank 2: %v", err)
	}
}

func TestRankHangs(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	// Rank 1 joins by hand and then goes silent: no heartbeats, socket still open.
	go func() {
		conn, err := net.Dial("tcp", cfg.Addr)
		if err != nil {
			return
		}
		defer conn.Close()
		h := sameFile(1)
		h.Version, h.World, h.Rank = Version, 2, 1
		msg := fmt.Appendf(nil, `{"version":%d,"world":2,"rank":1,"file":{"size":%d,"header_sha256":%q}}`, Version, testFile.Size, testFile.HeaderHash)
		writeFrame(conn, sendLimits(0), frameHello, msg)
		time.Sleep(5 * time.Second)
	}()
	c := cfg
	c.Listener = ln
	g, err := Join(context.Background(), c, sameFile(0), func([]Hello) ([]byte, []byte, error) { return nil, nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = within(t, 2*time.Second, func() error { _, err := g.Result(); return err })
	if err == nil || !strings.Contains(err.Error(), "lost rank 1: timed out") {
		t.Errorf("got %v", err)
	}
}

func TestCancelOnRank0StopsAll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, ln := testConfig(t, 3)
	ctxs := func(r int) context.Context {
		if r == 0 {
			return ctx
		}
		return context.Background()
	}
	gs, errs := make([]*Group, 3), make([]error, 3)
	var wg sync.WaitGroup
	for r := range 3 {
		c := cfg
		c.Rank = r
		if r == 0 {
			c.Listener = ln
		}
		wg.Go(func() {
			gs[r], errs[r] = Join(ctxs(r), c, sameFile(r), func([]Hello) ([]byte, []byte, error) { return nil, nil, nil })
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	cancel()
	for r := 1; r < 3; r++ {
		err := within(t, 2*time.Second, func() error { _, err := gs[r].Command(context.Background()); return err })
		if err == nil || !strings.Contains(err.Error(), "rank 0: interrupted") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestFileCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) FileID {
		p := dir + "/" + name
		if err := osWriteFile(p, body); err != nil {
			t.Fatal(err)
		}
		id, err := FileCheck(p)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b, c := write("a", "GGUF one"), write("b", "GGUF one"), write("c", "GGUF two")
	if a != b || a == c || a.Size != 8 {
		t.Errorf("a %v b %v c %v", a, b, c)
	}
	if _, err := FileCheck(dir + "/missing"); err == nil {
		t.Error("missing file: no error")
	}
}

func TestStepTimeout(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	cfg.StepTimeout = 200 * time.Millisecond
	gs, errs := joinAll(context.Background(), cfg, ln, sameFile)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	defer gs[1].Close()
	defer gs[0].Close()
	// A step answered in time keeps the group alive past the timeout.
	gs[0].Broadcast([]byte("a"))
	gs[1].Command(context.Background())
	gs[1].SendResult([]byte("r"))
	if _, err := gs[0].Result(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * cfg.StepTimeout)
	if err := gs[0].Err(); err != nil {
		t.Fatalf("idle group failed: %v", err)
	}
	// Rank 1 takes the next command and never answers, heartbeats still flowing.
	gs[0].Broadcast([]byte("b"))
	gs[1].Command(context.Background())
	err := within(t, 2*time.Second, func() error { _, err := gs[0].Result(); return err })
	if err == nil || !strings.Contains(err.Error(), "no result from the other ranks within 200ms") {
		t.Errorf("got %v", err)
	}
}

func TestSilentConnectionDoesNotBlockTheJoin(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	// Something connects first and says nothing (a port scanner, a health check).
	silent, err := net.Dial("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var gs []*Group
	var errs []error
	within(t, 2*time.Second, func() error {
		gs, errs = joinAll(context.Background(), cfg, ln, sameFile)
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for _, g := range gs {
		g.Close()
	}
}

package model

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/split"
)

// rankLink joins a dist group with a transport: what a rank's model talks through.
type rankLink struct {
	*dist.Group
	dist.Transport
}

// ranks is a multi-process pipeline run as goroutines of the test: rank 0's model, and
// the errors the other ranks' Serve returned once they end.
type ranks struct {
	m0     *Model
	g      []*dist.Group
	served chan error
}

// startRanks joins world ranks over loopback TCP, plans path over them (CPU ranks), and
// loads every rank's stage with opts; ranks 1.. serve in the background.
func startRanks(t *testing.T, path string, opts Options, world int) *ranks {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	file, err := dist.FileCheck(path)
	if err != nil {
		t.Fatal(err)
	}
	// The results' bound is exactly what the largest batch needs: the tests send them.
	maxResult, err := RankResultBytes(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := dist.PipeTransports(world)
	rs := &ranks{g: make([]*dist.Group, world), served: make(chan error, world)}
	models := make([]*Model, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		cfg := dist.Config{World: world, Rank: r, Addr: ln.Addr().String(), ConnectTimeout: 5 * time.Second, Heartbeat: 100 * time.Millisecond,
			MaxResult: maxResult}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() {
			g, err := dist.Join(context.Background(), cfg, dist.Hello{File: file, Device: "cpu", Free: split.Unlimited},
				func(hs []dist.Hello) ([]byte, []byte, error) {
					devs := make([]RankDevice, len(hs))
					for i, h := range hs {
						devs[i] = RankDevice{Name: h.Device, Free: h.Free}
					}
					p, err := PlanRanks(path, opts, devs)
					if err != nil {
						return nil, nil, err
					}
					b, err := MarshalPlan(p)
					return b, nil, err
				})
			if err != nil {
				errs[r] = err
				return
			}
			rs.g[r] = g
			g.OnFail(ts[r].Abort)
			plan, err := UnmarshalPlan(g.Welcome().Plan)
			if err == nil {
				models[r], err = LoadRank(path, opts, plan, rankLink{g, ts[r]})
			}
			if err != nil {
				g.Fail(err)
				errs[r] = err
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r := 1; r < world; r++ {
		go func() {
			err := models[r].Serve(context.Background())
			if !errors.Is(err, dist.ErrClosed) {
				rs.g[r].Fail(err)
			}
			models[r].Close()
			rs.served <- err
		}()
	}
	rs.m0 = models[0]
	t.Cleanup(func() {
		rs.g[0].Close()
		rs.m0.Close()
	})
	return rs
}

// finish ends the run normally and checks that every other rank ended cleanly.
func (rs *ranks) finish(t *testing.T) {
	t.Helper()
	rs.g[0].Close()
	for range len(rs.g) - 1 {
		if err := <-rs.served; !errors.Is(err, dist.ErrClosed) {
			t.Errorf("a rank ended with %v", err)
		}
	}
}

// evalRank0 is sessionSteps on a session of rank 0's model.
func evalRank0(t *testing.T, m *Model, prompt []int32) []float32 {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return sessionSteps(t, s, prompt)
}

func TestRanksBitIdentical(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	prompt := []int32{1, 7, 3, 9, 2, 5, 5, 8, 0, 10, 4, 6, 1, 2, 3, 9, 7, 6, 5, 4, 3}
	base := Options{Threads: 1, ContextSize: 64, BatchSize: 8, MicroBatch: 8, KVType: KVCacheF32}
	one, _ := evalSteps(t, path, base, prompt)
	for _, tt := range []struct {
		name      string
		world, ub int
		wire      WireFormat
	}{
		{"2 ranks", 2, 8, WireF32},
		{"2 ranks, micro-batches of 3", 2, 3, WireF32},
		{"3 ranks, micro-batches of 3", 3, 3, WireF32},
		{"2 ranks, f16 wire", 2, 8, WireF16},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.MicroBatch, o.Wire = tt.ub, tt.wire
			// The single-process split over the same number of CPU stages.
			so := o
			so.Devices, so.Split.Ratios = cpuDevices(t, tt.world), equal(tt.world)
			split, stages := evalSteps(t, path, so, prompt)
			if stages != tt.world {
				t.Fatalf("single-process split has %d stages, want %d", stages, tt.world)
			}
			rs := startRanks(t, path, o, tt.world)
			if got := len(rs.m0.Plan().Stages); got != tt.world {
				t.Fatalf("rank plan has %d stages", got)
			}
			got := evalRank0(t, rs.m0, prompt)
			rs.finish(t)
			if i := sameBits(got, split); i >= 0 {
				t.Fatalf("logit %d of %d: %d ranks %g, single-process split %g", i, len(split), tt.world, got[i], split[i])
			}
			if tt.wire == WireF32 && tt.ub == base.MicroBatch {
				if i := sameBits(got, one); i >= 0 {
					t.Fatalf("logit %d of %d: %d ranks %g, one stage %g", i, len(one), tt.world, got[i], one[i])
				}
			}
		})
	}
}

func TestRanksGenerateAndPerplexity(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	o := Options{Threads: 1, ContextSize: 128, BatchSize: 32, MicroBatch: 16}
	m1, err := Load(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	gopts := GenerateOptions{NPredict: 24, Sampler: SamplerOptions{Temp: 0}}
	want, err := Generate(context.Background(), m1, "Once upon a time", gopts, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Lily and Tom went to the park to play with a red ball. ", 8)
	popts := PerplexityOptions{Ctx: 64, Batch: 32}
	wantPPL, err := Perplexity(context.Background(), m1, text, popts, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := startRanks(t, path, o, 2)
	got, err := Generate(context.Background(), rs.m0, "Once upon a time", gopts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || !slices.Equal(got.Tokens, want.Tokens) {
		t.Errorf("2 ranks generated %q, one process %q", got.Text, want.Text)
	}
	gotPPL, err := Perplexity(context.Background(), rs.m0, text, popts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gotPPL.PPL != wantPPL.PPL {
		t.Errorf("2 ranks perplexity %v, one process %v", gotPPL.PPL, wantPPL.PPL)
	}
	rs.finish(t)
}

func TestRankDiesMidRun(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	rs := startRanks(t, path, Options{Threads: 1, ContextSize: 64, BatchSize: 8}, 2)
	s, err := rs.m0.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval([]int32{1, 2, 3}, false); err != nil {
		t.Fatal(err)
	}
	rs.g[1].Fail(errors.New("rank 1: killed")) // rank 1 gives up; its sockets close
	start := time.Now()
	_, err = s.Eval([]int32{4}, false)
	if err == nil || !strings.Contains(err.Error(), "rank 1: killed") {
		t.Errorf("rank 0: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("rank 0 took %v to notice", d)
	}
}

func TestPlanRanks(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	devs := func(n int) []RankDevice {
		d := make([]RankDevice, n)
		for i := range d {
			d[i] = RankDevice{Name: "cpu", Free: split.Unlimited}
		}
		return d
	}
	p, err := PlanRanks(path, Options{ContextSize: 64, Split: SplitOptions{Ratios: []float64{3, 1}}}, devs(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != 2 || p.Stages[0].Layers() <= p.Stages[1].Layers() {
		t.Errorf("-ts 3/1 over 2 ranks: %v", p)
	}
	b, err := MarshalPlan(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalPlan(b)
	if err != nil || back.String() != p.String() {
		t.Errorf("plan round trip: %v, %v", back, err)
	}
	// 5 layers and the head over 8 ranks: some rank would own nothing.
	if _, err := PlanRanks(path, Options{ContextSize: 64}, devs(8)); err == nil || !strings.Contains(err.Error(), "stages for 8 ranks") {
		t.Errorf("8 ranks: %v", err)
	}
	if _, err := PlanRanks(path, Options{ContextSize: 64, Split: SplitOptions{GPULayers: 3}}, devs(2)); err == nil || !strings.Contains(err.Error(), "-ngl") {
		t.Errorf("-ngl 3: %v", err)
	}
	// A GPU that is too small is refused before any rank loads.
	small := []RankDevice{{Name: "gpu0", Free: 1 << 10}, {Name: "gpu1", Free: 1 << 10}}
	if _, err := PlanRanks(path, Options{ContextSize: 64}, small); err == nil {
		t.Error("1 KiB GPUs: no error")
	}
}

func TestCommandRoundTrip(t *testing.T) {
	c := command{session: 1<<40 + 3, pos: 17, n: 512, count: 1}
	got, err := unmarshalCommand(c.marshal())
	if err != nil || got != c {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := unmarshalCommand([]byte{1, 2}); err == nil {
		t.Error("short command: no error")
	}
}

// idleLink is a Link that is never used: LoadRank only reads its rank and world.
type idleLink struct{ rank, world int }

func (l idleLink) Rank() int                               { return l.rank }
func (l idleLink) World() int                              { return l.world }
func (l idleLink) Broadcast([]byte) error                  { return errors.New("idle") }
func (l idleLink) Command(context.Context) ([]byte, error) { return nil, errors.New("idle") }
func (l idleLink) SendResult([]byte) error                 { return errors.New("idle") }
func (l idleLink) Result() ([]byte, error)                 { return nil, errors.New("idle") }
func (l idleLink) Send(int, backend.Buffer) error          { return errors.New("idle") }
func (l idleLink) Recv(int, backend.Buffer) error          { return errors.New("idle") }

// uploadCounter is a device that copies weights in (no Wrap) and counts the bytes.
type uploadCounter struct {
	backend.Device
	bytes *int64
}

func (d uploadCounter) Upload(dst backend.Buffer, src []byte) error {
	*d.bytes += int64(len(src))
	return d.Device.Upload(dst, src)
}

// TestLoadRankUploadsOwnStageOnly checks that each rank places exactly its own stage's
// weights on its device: the bytes uploaded are the plan's weights for that stage.
func TestLoadRankUploadsOwnStageOnly(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	opts := Options{Threads: 1, ContextSize: 64}
	plan, err := PlanRanks(path, opts, []RankDevice{{Name: "a", Free: split.Unlimited}, {Name: "b", Free: split.Unlimited}})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 2 {
		var n int64
		dev := uploadCounter{Device: cpuDevices(t, 1)[0], bytes: &n}
		o := opts
		o.Device = dev
		m, err := LoadRank(path, o, plan, idleLink{r, 2})
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		if want := plan.Stages[r].Weights; n != want {
			t.Errorf("rank %d uploaded %d bytes, its stage's weights are %d", r, n, want)
		}
		t.Logf("rank %d: %d bytes uploaded of layers %d-%d", r, n, plan.Stages[r].First, plan.Stages[r].Last-1)
	}
}

// scriptedLink is an idleLink whose Command returns the given commands in turn.
type scriptedLink struct {
	idleLink
	cmds [][]byte
}

func (l *scriptedLink) Command(context.Context) ([]byte, error) {
	if len(l.cmds) == 0 {
		return nil, dist.ErrClosed
	}
	c := l.cmds[0]
	l.cmds = l.cmds[1:]
	return c, nil
}

func TestServeRejectsBadCommands(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	opts := Options{Threads: 1, ContextSize: 64, BatchSize: 8}
	plan, err := PlanRanks(path, opts, []RankDevice{{Name: "a", Free: split.Unlimited}, {Name: "b", Free: split.Unlimited}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cmd  []byte
		want string
	}{
		{"batch over -b", command{session: 1, n: 9, count: 1}.marshal(), "bad batch from rank 0"},
		{"past the context", command{session: 1, pos: 60, n: 8, count: 1}.marshal(), "bad batch from rank 0"},
		{"logits for more rows than the batch", command{session: 1, n: 4, count: 5}.marshal(), "bad batch from rank 0"},
		{"negative count", command{session: 1, n: 4, count: -1}.marshal(), "bad batch from rank 0"},
		{"garbage", []byte("hello"), "a command of 5 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			link := &scriptedLink{idleLink: idleLink{1, 2}, cmds: [][]byte{tt.cmd}}
			m, err := LoadRank(path, opts, plan, link)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	// Rank 0 does not serve.
	m, err := LoadRank(path, opts, plan, idleLink{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Serve(context.Background()); err == nil {
		t.Error("Serve on rank 0: no error")
	}
}

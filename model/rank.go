package model

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/split"
	"github.com/infergo/infer/tensor"
)

// One rank of a multi-process pipeline: the plan has one stage per rank, stage r on
// rank r, and every rank loads the same file but places only its own stage's weights
// (the other stages sit on remoteDevice placeholders). Rank 0 drives: its Session runs
// as usual (Generate, Perplexity), and before each batch it sends the batch's shape to
// the other ranks, which mirror it in Serve. Each rank computes its stage one
// micro-batch at a time, receiving the hidden state from the previous rank and sending
// it to the next through the Link, so the ranks pipeline a long batch as the stages of
// one process do; the last rank sends the logits back to rank 0, which samples.

// Link is what one rank's model needs from its process group (dist.Group) and its
// transport (a dist.Transport: TCP, or NCCL on GPUs).
type Link interface {
	Rank() int
	World() int
	// Broadcast sends a command from rank 0 to every other rank; Command receives it.
	Broadcast(cmd []byte) error
	Command(ctx context.Context) ([]byte, error)
	// SendResult sends bytes from a rank to rank 0; Result receives them.
	SendResult(b []byte) error
	Result() ([]byte, error)
	// Send and Recv move a buffer to and from a neighbouring rank, in the order of the
	// buffer's device.
	Send(peer int, src backend.Buffer) error
	Recv(peer int, dst backend.Buffer) error
}

// RankDevice describes one rank's device to rank 0's planner.
type RankDevice struct {
	Name string
	Free int64 // bytes; split.Unlimited for a CPU
}

// PlanRanks returns the plan of a model over ranks, one stage per rank in rank order:
// what rank 0 sends every rank. opts.Split.Ratios (-ts) weight the ranks; partial
// offload (-ngl) is not supported across ranks.
func PlanRanks(path string, opts Options, ranks []RankDevice) (*split.Plan, error) {
	if opts.Split.GPULayers != 0 {
		return nil, errors.New("model: -ngl (partial offload) is not supported across ranks: every rank owns a whole stage")
	}
	opts.Devices = nil
	for _, r := range ranks {
		opts.Devices = append(opts.Devices, &remoteDevice{name: r.Name, free: r.Free})
	}
	opts.Device = nil
	p, err := PlanFor(path, opts)
	if err != nil {
		return nil, err
	}
	return p, checkRankPlan(p, len(ranks))
}

// checkRankPlan reports a plan that does not give each of world ranks one stage.
func checkRankPlan(p *split.Plan, world int) error {
	if len(p.Stages) != world {
		return fmt.Errorf("model: the plan has %d stages for %d ranks: every rank must own one stage (too few layers? weight the ranks with -ts, e.g. when CPU and GPU ranks mix)", len(p.Stages), world)
	}
	for k, s := range p.Stages {
		if s.Slot != k {
			return fmt.Errorf("model: plan stage %d is on slot %d, want rank %d", k, s.Slot, k)
		}
	}
	return nil
}

// RankResultBytes is the largest result a rank of a multi-process run of the model at
// path with opts sends rank 0 (dist.Config.MaxResult): the logits of a whole batch.
func RankResultBytes(path string, opts Options) (int, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cfg, err := configFromGGUF(f)
	if err != nil {
		return 0, err
	}
	return 4 * cfg.NVocab * opts.resolve(cfg).BatchSize, nil
}

// MarshalPlan and UnmarshalPlan carry a plan between ranks.
func MarshalPlan(p *split.Plan) ([]byte, error) { return json.Marshal(p) }

// UnmarshalPlan decodes a plan MarshalPlan encoded.
func UnmarshalPlan(b []byte) (*split.Plan, error) {
	var p split.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("model: plan from rank 0: %w", err)
	}
	return &p, nil
}

// LoadRank loads rank link.Rank()'s stage of plan (one stage per rank, as PlanRanks
// makes it) from the file at path: on opts.Device (or opts.Devices[0]), or on a CPU
// device it creates when neither is set. The other stages load nothing. Rank 0 uses the
// model as any other (its sessions drive every rank); the other ranks call Serve.
func LoadRank(path string, opts Options, plan *split.Plan, link Link) (*Model, error) {
	r, w := link.Rank(), link.World()
	if w < 2 || r < 0 || r >= w {
		return nil, fmt.Errorf("model: rank %d of %d: want at least 2 ranks", r, w)
	}
	if err := checkRankPlan(plan, w); err != nil {
		return nil, err
	}
	local := opts.Device
	if len(opts.Devices) > 0 {
		local = opts.Devices[0]
	}
	local0 := *plan
	local0.Stages = append([]split.Placement(nil), plan.Stages...)
	devs := make([]backend.Device, w)
	for k, s := range plan.Stages {
		devs[k] = &remoteDevice{name: s.Device.Name, free: s.Device.Free}
	}
	if local != nil {
		devs[r] = local
	} else {
		local0.Stages[r].Slot = -1 // the model's own CPU device
	}
	opts.Device, opts.Devices, opts.Split = nil, devs, SplitOptions{Plan: &local0}
	m, err := Load(path, opts)
	if err != nil {
		return nil, err
	}
	m.rank = &rankRun{link: link, r: r, w: w, ids: map[*Session]uint64{}, sessions: map[uint64]*Session{}}
	return m, nil
}

// rankRun is the multi-process state of a model loaded by LoadRank.
type rankRun struct {
	link Link
	r, w int
	mu   sync.Mutex
	ids  map[*Session]uint64 // rank 0: its sessions' numbers
	next uint64
	// sessions are a follower's mirrors of rank 0's sessions; current is the one in use.
	sessions map[uint64]*Session
	current  uint64
	logits   []byte   // the last rank's host copy of a batch's logits, reused
	rows     []int32  // a follower's stand-in tokens for a layout
	one      [1]seqIn // exec's one sequence, kept here so that a step does not allocate
}

// command is one batch as rank 0 sends it to the other ranks: n rows at pos, the last
// count of which have logits (a batch's logits are always for its last rows).
type command struct {
	session uint64
	pos, n  int
	count   int
}

const commandBytes = 8 + 3*4

func (c command) marshal() []byte {
	b := make([]byte, commandBytes)
	binary.LittleEndian.PutUint64(b, c.session)
	for i, v := range []int{c.pos, c.n, c.count} {
		binary.LittleEndian.PutUint32(b[8+4*i:], uint32(v))
	}
	return b
}

func unmarshalCommand(b []byte) (command, error) {
	if len(b) != commandBytes {
		return command{}, fmt.Errorf("model: a command of %d bytes from rank 0, want %d", len(b), commandBytes)
	}
	v := func(i int) int { return int(binary.LittleEndian.Uint32(b[8+4*i:])) }
	return command{session: binary.LittleEndian.Uint64(b), pos: v(0), n: v(1), count: v(2)}, nil
}

// batch is Session.batch on rank 0 of a multi-process model: tell the other ranks,
// compute stage 0, and receive the logits of the last count rows, which the last rank
// sends.
func (rr *rankRun) batch(s *Session, tokens []int32, count int, dst []float32) error {
	n := len(tokens)
	cmd := command{session: rr.id(s), pos: s.pos, n: n, count: count}
	if err := rr.link.Broadcast(cmd.marshal()); err != nil {
		return err
	}
	if _, err := rr.exec(s, tokens, cmd); err != nil {
		return err
	}
	if count > 0 {
		res, err := rr.link.Result()
		if err != nil {
			return err
		}
		want := dst[:count*s.m.cfg.NVocab]
		if len(res) != 4*len(want) {
			return fmt.Errorf("logits from rank %d: %d bytes, want %d", rr.w-1, len(res), 4*len(want))
		}
		copy(tensor.Float32Bytes(want), res)
	}
	s.pos += n
	return nil
}

// id numbers rank 0's session s for the other ranks.
func (rr *rankRun) id(s *Session) uint64 {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if id, ok := rr.ids[s]; ok {
		return id
	}
	for old := range rr.ids {
		if old.m == nil { // closed
			delete(rr.ids, old)
		}
	}
	rr.next++
	rr.ids[s] = rr.next
	return rr.next
}

// Serve runs a rank other than 0 of a multi-process model: it mirrors every batch rank 0
// sends until the link ends, and returns the link's error (the end of the run, from
// dist, is dist.ErrClosed). Rank 0 must use one session at a time: a follower keeps the
// mirror of the latest session only.
func (m *Model) Serve(ctx context.Context) error {
	rr := m.rank
	if rr == nil || rr.r == 0 {
		return errors.New("model: Serve is for ranks other than 0 of a model loaded with LoadRank")
	}
	defer rr.closeSessions()
	for {
		b, err := rr.link.Command(ctx)
		if err != nil {
			return err
		}
		cmd, err := unmarshalCommand(b)
		if err != nil {
			return err
		}
		s, err := rr.session(m, cmd.session)
		if err != nil {
			return err
		}
		if cmd.n <= 0 || cmd.n > m.opts.BatchSize || cmd.pos < 0 || cmd.pos+cmd.n > s.ctx || cmd.count < 0 || cmd.count > cmd.n {
			return fmt.Errorf("model: rank %d: bad batch from rank 0: %+v (the ranks disagree on -b or -c?)", rr.r, cmd)
		}
		s.pos = cmd.pos
		logits, err := rr.exec(s, nil, cmd)
		if err != nil {
			return wrapf(err, "rank %d: batch of %d at position %d", rr.r, cmd.n, cmd.pos)
		}
		if logits != nil {
			if err := rr.link.SendResult(logits); err != nil {
				return err
			}
		}
		s.pos += cmd.n
	}
}

// session returns the follower's mirror of rank 0's session id, replacing the previous
// one.
func (rr *rankRun) session(m *Model, id uint64) (*Session, error) {
	if s, ok := rr.sessions[id]; ok {
		return s, nil
	}
	if id < rr.current {
		return nil, fmt.Errorf("model: rank %d: rank 0 went back to an earlier session; a multi-process model runs one session at a time", rr.r)
	}
	rr.closeSessions()
	s, err := m.NewSession()
	if err != nil {
		return nil, err
	}
	rr.sessions[id], rr.current = s, id
	return s, nil
}

func (rr *rankRun) closeSessions() {
	for id, s := range rr.sessions {
		s.Close()
		delete(rr.sessions, id)
	}
}

// exec computes this rank's stage of one batch: tokens (rank 0) and positions uploaded,
// then per micro-batch receive the hidden state, run the stage, send it on. The last
// rank returns the logits' bytes when the batch wants some (valid until the next exec).
func (rr *rankRun) exec(s *Session, tokens []int32, c command) ([]byte, error) {
	m, k, n := s.m, rr.r, c.n
	st, last := &m.stages[k], k == len(m.stages)-1
	sc, err := s.scratch()
	if err != nil {
		return nil, err
	}
	if cap(rr.rows) < n {
		rr.rows = make([]int32, n) // followers' stand-in tokens: the layout needs only their count
	}
	seq := tokens
	if seq == nil {
		seq = rr.rows[:n]
	}
	rr.one[0] = seqIn{s: s, tokens: seq, logits: c.count}
	l := sc.layout(rr.one[:])
	ids, pos := sc.stageRows(rr.one[:], n) // positions from s.pos, which is c.pos here
	rr.one[0] = seqIn{}
	if k == 0 {
		if err := st.dev.Upload(l.tokens, ids); err != nil {
			return nil, err
		}
	}
	if err := st.dev.Upload(l.pos[k], pos); err != nil {
		return nil, err
	}
	var key string
	if n == 1 {
		key = s.keys[min(c.count, 1)][k]
	}
	for i := range l.in {
		if err := rr.micro(m, k, l.in[i], l.out[i], key); err != nil {
			return nil, errors.Join(fmt.Errorf("micro-batch %d: %w", i, err), st.dev.Sync())
		}
	}
	if err := st.dev.Sync(); err != nil {
		return nil, fmt.Errorf("stage %d on %s: %w", k, st.dev.Name(), err)
	}
	if !last || c.count == 0 {
		return nil, nil
	}
	n4 := 4 * c.count * m.cfg.NVocab
	if cap(rr.logits) < n4 {
		rr.logits = make([]byte, n4)
	}
	out := rr.logits[:n4]
	if err := st.dev.Download(out, l.logits[0]); err != nil {
		return nil, err
	}
	return out, nil
}

// micro runs stage k of one micro-batch (a, o as Model.forward takes them), with the
// hidden state received from rank k-1 and sent to rank k+1; key, when not empty, names
// the stage's decode recording.
func (rr *rankRun) micro(m *Model, k int, a, o []activations, key string) error {
	skipped := func(j int) bool { // forward stops at the first idle stage
		for i := 1; i <= j; i++ {
			if m.idle(i, o) {
				return true
			}
		}
		return false
	}
	if skipped(k) {
		return nil
	}
	st, f16 := &m.stages[k], m.opts.Wire == WireF16
	if k > 0 {
		dst := a[k].x
		if f16 {
			dst = a[k].wireIn
		}
		if err := rr.link.Recv(k-1, dst); err != nil {
			return fmt.Errorf("hidden state from rank %d: %w", k-1, err)
		}
		if f16 {
			st.dev.Copy(a[k].x, a[k].wireIn)
		}
	}
	if err := m.runStage(k, a, o, key); err != nil {
		return err
	}
	if k+1 < len(m.stages) && !skipped(k+1) {
		src := a[k].x
		if f16 {
			st.dev.Copy(a[k].wireOut, a[k].x)
			src = a[k].wireOut
		}
		if err := rr.link.Send(k+1, src); err != nil {
			return fmt.Errorf("hidden state to rank %d: %w", k+1, err)
		}
	}
	return nil
}

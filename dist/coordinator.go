package dist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Version is the protocol version; every rank must speak the same one (2: a rank command
// carries the count of logits rows only, 20 bytes).
const Version = 2

// Defaults of Config.
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultHeartbeat      = time.Second
	DefaultStepTimeout    = 10 * time.Minute
	// missedBeats is how many heartbeat intervals of silence lose a peer.
	missedBeats = 5
)

// ErrClosed is what Command and Result return once the run has ended normally: rank 0
// closed the group.
var ErrClosed = errors.New("dist: the run is over")

// Config is one rank's view of the process group.
type Config struct {
	World int    // number of ranks (processes); at least 2
	Rank  int    // this process's rank, 0..World-1; rank 0 is the coordinator
	Addr  string // the coordinator's host:port: rank 0 listens there, the others dial it
	// Listener, if not nil, is used by rank 0 instead of listening on Addr (a test
	// listens on port 0 first to learn the port).
	Listener net.Listener
	// ConnectTimeout bounds the start: rank 0 waits that long for every rank, the others
	// retry dialing that long. 0 = DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Heartbeat is the interval of the liveness messages; a peer silent for 5 of them is
	// lost. 0 = DefaultHeartbeat.
	Heartbeat time.Duration
	// StepTimeout bounds, on rank 0, the wait from a Broadcast to the Result that
	// answers it: a rank that stays connected but stops making progress (a stuck
	// device) fails the group after it. 0 = DefaultStepTimeout; negative = no bound.
	StepTimeout time.Duration
	// MaxResult bounds, in bytes, a result a rank sends rank 0 (the logits of a batch:
	// batch rows × vocabulary × 4); a longer one fails the group on both sides.
	// 0 = DefaultMaxResult.
	MaxResult int
}

// Hello is what each rank tells rank 0 when it joins.
type Hello struct {
	Version int    `json:"version"`
	World   int    `json:"world"`
	Rank    int    `json:"rank"`
	File    FileID `json:"file"`   // the model file every rank must share
	Device  string `json:"device"` // the rank's device, for the plan
	Free    int64  `json:"free"`   // its free memory in bytes, for the plan
	NCCL    bool   `json:"nccl"`   // the rank can move the hidden state with NCCL
	// Options are the settings every rank must share (context, batch sizes, cache and
	// wire types), as the command line spells them.
	Options string `json:"options"`
	// DataPort, if not 0, is the port of the rank's data listener (TCP transport); Join
	// fills DataAddr from it and the address rank 0 saw the rank connect from.
	DataPort int    `json:"data_port,omitempty"`
	DataAddr string `json:"data_addr,omitempty"`
}

// Welcome is what rank 0 sends every rank once all have joined.
type Welcome struct {
	Plan   []byte  `json:"plan"`   // opaque: the plan every rank follows
	Blob   []byte  `json:"blob"`   // opaque: the NCCL unique id, or nil
	Hellos []Hello `json:"hellos"` // every rank's Hello, in rank order
	Err    string  `json:"err,omitempty"`
}

// SetupFunc is rank 0's part of the start: given every rank's Hello (in rank order), it
// returns the plan and the blob to send to all.
type SetupFunc func(hellos []Hello) (plan, blob []byte, err error)

// Group is one rank's membership of a started process group.
type Group struct {
	cfg      Config
	welcome  Welcome
	peers    []*peer // rank 0: indexed by rank (peers[0] nil); others: peers[0] is rank 0
	commands chan []byte
	results  chan []byte
	done     chan struct{}
	mu       sync.Mutex
	err      error
	onFail   []func(error)
	stop     func() bool
	// busy is when rank 0 broadcast the first command not yet answered by a Result
	// (zero when none is pending), for the step watchdog.
	busy time.Time
}

// peer is the connection to one other rank.
type peer struct {
	rank int
	conn net.Conn
	wmu  sync.Mutex
	lost time.Duration
	in   *frameLimits // what the run reads from the peer
	out  *frameLimits // what may be sent to it
}

// newPeer returns the connection to rank over conn, reading and writing within the
// group's frame limits.
func (g *Group) newPeer(rank int, conn net.Conn) *peer {
	in := followerLimits
	if g.cfg.Rank == 0 {
		in = rank0Limits(g.cfg.MaxResult)
	}
	return &peer{rank: rank, conn: conn, lost: g.lost(), in: in, out: sendLimits(g.cfg.MaxResult)}
}

func (c Config) check() error {
	if c.World < 2 || c.Rank < 0 || c.Rank >= c.World {
		return fmt.Errorf("dist: rank %d of world %d: want a world of at least 2 and 0 <= rank < world", c.Rank, c.World)
	}
	if c.Addr == "" && c.Listener == nil {
		return errors.New("dist: no coordinator address (--coordinator HOST:PORT or MASTER_ADDR/MASTER_PORT)")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.StepTimeout == 0 {
		c.StepTimeout = DefaultStepTimeout
	}
	if c.MaxResult <= 0 {
		c.MaxResult = DefaultMaxResult
	}
	return c
}

// Join starts this rank's membership: rank 0 accepts the others and runs setup, the
// others dial rank 0 and receive the Welcome. It fails with one clear error when a rank
// does not join within the connect deadline, or joins with a different protocol
// version, world size or model file. ctx governs the whole membership: when it is done,
// the group fails and tells every other rank (Ctrl-C on rank 0 stops all ranks).
func Join(ctx context.Context, cfg Config, hello Hello, setup SetupFunc) (*Group, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	hello.Version, hello.World, hello.Rank = Version, cfg.World, cfg.Rank
	g := &Group{cfg: cfg, commands: make(chan []byte, 16), results: make(chan []byte, 4), done: make(chan struct{})}
	var err error
	if cfg.Rank == 0 {
		err = g.accept(ctx, hello, setup)
	} else {
		err = g.dial(ctx, hello)
	}
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.stop = context.AfterFunc(ctx, func() {
		g.Fail(fmt.Errorf("rank %d: interrupted (%v)", cfg.Rank, context.Cause(ctx)))
	})
	g.mu.Unlock()
	for _, p := range g.peers {
		if p != nil {
			go g.read(p)
			go g.beat(p)
		}
	}
	if cfg.Rank == 0 && cfg.StepTimeout > 0 {
		go g.watchSteps()
	}
	return g, nil
}

// accept is rank 0's start: collect a Hello from every other rank before the deadline,
// check them, run setup and send the Welcome.
func (g *Group) accept(ctx context.Context, hello Hello, setup SetupFunc) error {
	c := g.cfg
	ln := c.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", c.Addr); err != nil {
			return fmt.Errorf("dist: rank 0: listen on %s: %w", c.Addr, err)
		}
	}
	defer ln.Close()
	deadline := time.Now().Add(c.ConnectTimeout)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if tl, ok := ln.(*net.TCPListener); ok {
		tl.SetDeadline(deadline)
	}
	g.peers = make([]*peer, c.World)
	hellos := make([]Hello, c.World)
	hellos[0] = hello
	fail := func(err error) error {
		g.abortAll(err.Error(), true)
		return err
	}
	arrivals := acceptHellos(ln, deadline)
	defer arrivals.stop()
	for joined := 1; joined < c.World; {
		a := <-arrivals.ch
		switch {
		case a.conn == nil && ctx.Err() != nil:
			return fail(fmt.Errorf("dist: rank 0: interrupted while waiting for ranks: %w", context.Cause(ctx)))
		case a.conn == nil:
			return fail(fmt.Errorf("dist: rank 0: rank(s) %v did not connect to %s within %v", missing(g.peers), ln.Addr(), c.ConnectTimeout))
		case a.err != nil:
			a.conn.Close() // not one of ours, or too slow; keep waiting for the others
			continue
		}
		h, conn := a.hello, a.conn
		if err := checkHello(h, hello, g.peers); err != nil {
			p := g.newPeer(-1, conn)
			p.send(frameAbort, abortPayload(err.Error()))
			conn.Close()
			return fail(err)
		}
		if h.DataPort != 0 {
			host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
			h.DataAddr = net.JoinHostPort(host, fmt.Sprint(h.DataPort))
		}
		hellos[h.Rank] = h
		g.peers[h.Rank] = g.newPeer(h.Rank, conn)
		joined++
	}
	plan, blob, err := setup(hellos)
	if err != nil {
		return fail(fmt.Errorf("dist: rank 0: setup: %w", err))
	}
	g.welcome = Welcome{Plan: plan, Blob: blob, Hellos: hellos}
	msg, err := json.Marshal(g.welcome)
	if err != nil {
		return fail(fmt.Errorf("dist: rank 0: %w", err))
	}
	for _, p := range g.peers[1:] {
		if err := p.send(frameWelcome, msg); err != nil {
			return fail(fmt.Errorf("dist: rank 0: send the plan to rank %d: %w", p.rank, err))
		}
	}
	return nil
}

// arrival is a connection to rank 0 and the Hello read from it; conn nil means the
// listener stopped (the deadline passed, or the context ended).
type arrival struct {
	hello Hello
	conn  net.Conn
	err   error
}

// arrivals delivers the connections a listener accepts, each with its Hello read
// concurrently (so a silent connection holds up no one), until stop.
type arrivals struct {
	ch   chan arrival
	done chan struct{}
}

// helloTimeout bounds how long one connection may take to send its Hello.
const helloTimeout = 10 * time.Second

// acceptHellos accepts on ln until deadline and reads each connection's Hello.
func acceptHellos(ln net.Listener, deadline time.Time) *arrivals {
	a := &arrivals{ch: make(chan arrival), done: make(chan struct{})}
	deliver := func(x arrival) {
		select {
		case a.ch <- x:
		case <-a.done:
			if x.conn != nil {
				x.conn.Close()
			}
		}
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				deliver(arrival{err: err})
				return
			}
			go func() {
				h, err := readHello(conn, minTime(deadline, time.Now().Add(helloTimeout)))
				deliver(arrival{hello: h, conn: conn, err: err})
			}()
		}
	}()
	return a
}

// stop releases the goroutines still delivering; their connections are closed.
func (a *arrivals) stop() { close(a.done) }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// missing lists the ranks after 0 without a connection.
func missing(peers []*peer) []int {
	var out []int
	for r := 1; r < len(peers); r++ {
		if peers[r] == nil {
			out = append(out, r)
		}
	}
	return out
}

// readHello reads a joining rank's Hello.
func readHello(conn net.Conn, deadline time.Time) (Hello, error) {
	kind, payload, err := readFrameBy(conn, deadline, helloLimits)
	if err != nil {
		return Hello{}, err
	}
	var h Hello
	if kind != frameHello {
		return h, fmt.Errorf("frame %d before hello", kind)
	}
	return h, json.Unmarshal(payload, &h)
}

// checkHello reports a Hello that does not match rank 0's own.
func checkHello(h, own Hello, peers []*peer) error {
	switch {
	case h.Version != own.Version:
		return fmt.Errorf("dist: rank %d speaks protocol version %d, rank 0 version %d: run the same infer build on every rank", h.Rank, h.Version, own.Version)
	case h.World != own.World:
		return fmt.Errorf("dist: rank %d was started with a world of %d, rank 0 with %d", h.Rank, h.World, own.World)
	case h.Rank <= 0 || h.Rank >= own.World:
		return fmt.Errorf("dist: a rank joined as rank %d of a world of %d", h.Rank, own.World)
	case peers[h.Rank] != nil:
		return fmt.Errorf("dist: two processes joined as rank %d", h.Rank)
	case h.Options != own.Options:
		return fmt.Errorf("dist: rank %d was started with %q, rank 0 with %q: every rank needs the same settings", h.Rank, h.Options, own.Options)
	case h.File != own.File:
		return fmt.Errorf("dist: rank %d loaded a different model file (%v) than rank 0 (%v): every rank must load the same file", h.Rank, h.File, own.File)
	}
	return nil
}

// dial is a follower's start: reach rank 0 before the deadline, send the Hello and wait
// for the Welcome.
func (g *Group) dial(ctx context.Context, hello Hello) error {
	c := g.cfg
	deadline := time.Now().Add(c.ConnectTimeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := dialUntil(dctx, c.Addr)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("dist: rank %d: interrupted while dialing the coordinator: %w", c.Rank, context.Cause(ctx))
	} else if err != nil {
		return fmt.Errorf("dist: rank %d: could not reach the coordinator at %s within %v: %v", c.Rank, c.Addr, c.ConnectTimeout, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	p := g.newPeer(0, conn)
	msg, _ := json.Marshal(hello)
	if err := p.send(frameHello, msg); err != nil {
		conn.Close()
		return fmt.Errorf("dist: rank %d: send hello to %s: %w", c.Rank, c.Addr, err)
	}
	// Rank 0 answers once every rank has joined, or aborts at its own deadline; wait a
	// little longer than that.
	kind, payload, err := readFrameBy(conn, deadline.Add(c.ConnectTimeout), welcomeLimits)
	switch {
	case err != nil && ctx.Err() != nil:
		err = fmt.Errorf("dist: rank %d: interrupted while waiting for the coordinator: %w", c.Rank, context.Cause(ctx))
	case err != nil:
		err = fmt.Errorf("dist: rank %d: no plan from the coordinator at %s: %v", c.Rank, c.Addr, describe(err))
	case kind == frameAbort:
		err = fmt.Errorf("dist: rank %d: the coordinator gave up: %s", c.Rank, payload)
	case kind != frameWelcome:
		err = fmt.Errorf("dist: rank %d: unexpected frame %d from the coordinator", c.Rank, kind)
	default:
		err = json.Unmarshal(payload, &g.welcome)
	}
	if err != nil {
		conn.Close()
		return err
	}
	g.peers = []*peer{p}
	return nil
}

// dialUntil dials addr every 100 ms until it answers or ctx ends; the error is the
// last dial's.
func dialUntil(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readFrameBy reads one frame from conn, failing at deadline, and clears the deadline.
func readFrameBy(conn net.Conn, deadline time.Time, lim *frameLimits) (kind byte, payload []byte, err error) {
	conn.SetReadDeadline(deadline)
	defer conn.SetReadDeadline(time.Time{})
	return readFrame(conn, lim)
}

// lost is how long a silent peer is given before it counts as lost.
func (g *Group) lost() time.Duration { return missedBeats * g.cfg.Heartbeat }

// describe turns a connection error into words.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, net.ErrClosed):
		return "connection closed (the process exited?)"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out (the process hangs or the network is down)"
	}
	return err.Error()
}

// Rank is this process's rank.
func (g *Group) Rank() int { return g.cfg.Rank }

// World is the number of ranks.
func (g *Group) World() int { return g.cfg.World }

// Welcome is the plan, the blob and every rank's Hello, as rank 0 sent them.
func (g *Group) Welcome() Welcome { return g.welcome }

// Done is closed when the group has ended, normally or not (see Err).
func (g *Group) Done() <-chan struct{} { return g.done }

// Err is the group's failure; nil while it runs, ErrClosed after a normal end.
func (g *Group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// OnFail registers f to run once when the group fails or closes (a transport aborts
// its pending transfers there); it runs at once if the group already has.
func (g *Group) OnFail(f func(error)) {
	g.mu.Lock()
	if g.err == nil {
		g.onFail = append(g.onFail, f)
		g.mu.Unlock()
		return
	}
	err := g.err
	g.mu.Unlock()
	f(err)
}

// Fail ends the group with err and tells every other rank (directly, or through rank 0)
// why; the first failure wins.
func (g *Group) Fail(err error) {
	g.end(err, err.Error())
}

// end records err, tells the peers (abort text, or a normal bye when text is ""), closes
// the connections and runs the OnFail hooks.
func (g *Group) end(err error, text string) {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return
	}
	g.err = err
	hooks, stop := g.onFail, g.stop
	g.onFail = nil
	close(g.done)
	g.mu.Unlock()
	if stop != nil {
		stop()
	}
	if text == "" {
		for _, p := range g.peers {
			if p != nil && g.cfg.Rank == 0 {
				p.send(frameBye, nil)
			}
		}
	} else {
		g.abortAll(text, false)
	}
	for _, p := range g.peers {
		if p != nil {
			p.conn.Close()
		}
	}
	for _, f := range hooks {
		f(err)
	}
}

// abortAll tells every connected peer the run failed, briefly, ignoring errors, and
// closes the connections when closeConns is set.
func (g *Group) abortAll(text string, closeConns bool) {
	var wg sync.WaitGroup
	for _, p := range g.peers {
		if p != nil {
			wg.Go(func() {
				p.sendBy(frameAbort, abortPayload(text), time.Now().Add(time.Second))
				if closeConns {
					p.conn.Close()
				}
			})
		}
	}
	wg.Wait()
}

// Close ends the run normally: rank 0 tells every rank it is over, then every rank
// closes its connections.
func (g *Group) Close() error {
	g.end(ErrClosed, "")
	return nil
}

// Broadcast sends a command from rank 0 to every other rank.
func (g *Group) Broadcast(cmd []byte) error {
	if g.cfg.Rank != 0 {
		return errors.New("dist: only rank 0 broadcasts")
	}
	g.mu.Lock()
	if g.busy.IsZero() {
		g.busy = time.Now()
	}
	g.mu.Unlock()
	for _, p := range g.peers[1:] {
		if err := p.send(frameCommand, cmd); err != nil {
			return g.lostPeer(p, err)
		}
	}
	return nil
}

// watchSteps fails the group when a command stays unanswered for StepTimeout.
func (g *Group) watchSteps() {
	tick := time.NewTicker(min(time.Second, g.cfg.StepTimeout/4))
	defer tick.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-tick.C:
			g.mu.Lock()
			stuck := !g.busy.IsZero() && time.Since(g.busy) > g.cfg.StepTimeout
			g.mu.Unlock()
			if stuck {
				g.Fail(fmt.Errorf("dist: rank 0: no result from the other ranks within %v of the batch (a rank is stuck; --step-timeout)", g.cfg.StepTimeout))
				return
			}
		}
	}
}

// Command waits for rank 0's next command; after rank 0 closed the group it returns
// ErrClosed, after a failure the failure.
func (g *Group) Command(ctx context.Context) ([]byte, error) {
	select {
	case c := <-g.commands:
		return c, nil
	case <-g.done:
		select {
		case c := <-g.commands: // commands sent before the bye still count
			return c, nil
		default:
		}
		return nil, g.Err()
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// SendResult sends a result to rank 0.
func (g *Group) SendResult(b []byte) error {
	if g.cfg.Rank == 0 {
		return errors.New("dist: rank 0 does not send results")
	}
	if err := g.peers[0].send(frameResult, b); err != nil {
		return g.lostPeer(g.peers[0], err)
	}
	return nil
}

// Result waits on rank 0 for the next result any rank sent.
func (g *Group) Result() ([]byte, error) {
	select {
	case r := <-g.results:
		g.mu.Lock()
		g.busy = time.Time{}
		g.mu.Unlock()
		return r, nil
	case <-g.done:
		return nil, g.Err()
	}
}

// lostPeer handles a send to p that failed: the reader of p's connection usually
// learns why first (a bye, an abort, a close), so give it the lost interval before
// failing the group; it returns the group's error.
func (g *Group) lostPeer(p *peer, err error) error {
	var fe *frameError
	if errors.As(err, &fe) { // refused before anything was sent: the caller's mistake
		return fmt.Errorf("dist: rank %d: %v", g.cfg.Rank, fe)
	}
	select {
	case <-g.done:
	case <-time.After(g.lost()):
		g.Fail(fmt.Errorf("dist: rank %d: lost rank %d: %s", g.cfg.Rank, p.rank, describe(err)))
	}
	return g.Err()
}

// read receives p's frames until the group ends: heartbeats keep p alive, commands and
// results are queued, an abort or a silence fails the group.
func (g *Group) read(p *peer) {
	for {
		p.conn.SetReadDeadline(time.Now().Add(p.lost))
		kind, payload, err := readFrame(deadlineReader{p}, p.in)
		if err != nil {
			select {
			case <-g.done:
				return
			default:
			}
			var fe *frameError
			if errors.As(err, &fe) {
				g.Fail(fmt.Errorf("dist: rank %d: a bad frame from rank %d: %v", g.cfg.Rank, p.rank, fe))
			} else {
				g.Fail(fmt.Errorf("dist: rank %d: lost rank %d: %s", g.cfg.Rank, p.rank, describe(err)))
			}
			return
		}
		switch kind {
		case frameHeartbeat:
		case frameCommand:
			select {
			case g.commands <- payload:
			case <-g.done:
				return
			}
		case frameResult:
			select {
			case g.results <- payload:
			case <-g.done:
				return
			}
		case frameBye:
			g.end(ErrClosed, "")
			return
		case frameAbort:
			g.end(fmt.Errorf("dist: rank %d: rank %d aborted the run: %s", g.cfg.Rank, p.rank, payload), string(payload))
			return
		}
	}
}

// deadlineReader extends a peer's read deadline as a large frame keeps arriving.
type deadlineReader struct{ p *peer }

func (r deadlineReader) Read(b []byte) (int, error) {
	n, err := r.p.conn.Read(b)
	if n > 0 {
		r.p.conn.SetReadDeadline(time.Now().Add(r.p.lost))
	}
	return n, err
}

// beat sends p a heartbeat every interval until the group ends.
func (g *Group) beat(p *peer) {
	t := time.NewTicker(g.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			if err := p.send(frameHeartbeat, nil); err != nil {
				return // the reader sees the connection end and says why
			}
		}
	}
}

// send writes one frame to p; a peer that stops reading for longer than the lost
// interval (per megabyte-ish of payload) fails the write.
func (p *peer) send(kind byte, payload []byte) error {
	return p.sendBy(kind, payload, time.Now().Add(p.lost+time.Duration(len(payload)/(10<<20))*time.Second))
}

// sendBy writes one frame to p, failing at deadline.
func (p *peer) sendBy(kind byte, payload []byte, deadline time.Time) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.conn.SetWriteDeadline(deadline)
	return writeFrame(p.conn, p.out, kind, payload)
}

package dist

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/infergo/infer/backend"
)

// Transport moves buffers between ranks: the hidden state from each rank to the next.
// Send and Recv enqueue the transfer in the order of the buffer's device (a CPU or TCP
// transport simply completes it); a peer's Send and its neighbour's Recv pair up in
// order. Abort makes every pending and later call fail with err: the group calls it
// when any rank fails, so no rank blocks on a neighbour that is gone.
type Transport interface {
	Send(peer int, src backend.Buffer) error
	Recv(peer int, dst backend.Buffer) error
	Abort(err error)
	Close() error
}

// ConnTransport is a Transport over one stream connection per neighbour (TCP between
// processes, net.Pipe in tests): each transfer is the buffer's bytes, downloaded from
// its device on the sender and uploaded on the receiver, behind a length.
type ConnTransport struct {
	mu      sync.Mutex
	conns   map[int]net.Conn
	bufs    map[int][]byte
	err     error
	aborted chan struct{} // closed by Abort
	// grace is how long a broken connection waits for Abort to give the reason (the
	// group learns why a rank failed a moment after its sockets close).
	grace time.Duration
}

// NewConnTransport returns a transport over conns, indexed by peer rank.
func NewConnTransport(conns map[int]net.Conn) *ConnTransport {
	return &ConnTransport{conns: conns, bufs: map[int][]byte{}, aborted: make(chan struct{})}
}

// conn returns peer's connection and a host buffer of n bytes for it.
func (t *ConnTransport) conn(peer, n int) (net.Conn, []byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, nil, t.err
	}
	c, ok := t.conns[peer]
	if !ok {
		return nil, nil, fmt.Errorf("dist: no connection to rank %d", peer)
	}
	b := t.bufs[peer]
	if cap(b) < n {
		b = make([]byte, n)
		t.bufs[peer] = b
	}
	return c, b[:n], nil
}

// failed returns the abort error in place of err once the transport was aborted.
func (t *ConnTransport) failed(peer int, op string, err error) error {
	select {
	case <-t.aborted:
	case <-time.After(t.grace):
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	return fmt.Errorf("dist: %s rank %d: %s", op, peer, describe(err))
}

// Send downloads src and writes it to peer.
func (t *ConnTransport) Send(peer int, src backend.Buffer) error {
	n := src.Rows() * src.DType().RowBytes(src.Cols())
	c, b, err := t.conn(peer, 4+n)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b, uint32(n))
	if err := src.Device().Download(b[4:], src); err != nil {
		return fmt.Errorf("dist: send to rank %d: %w", peer, err)
	}
	if _, err := c.Write(b); err != nil {
		return t.failed(peer, "send to", err)
	}
	return nil
}

// Recv reads peer's next transfer into dst; its size must be dst's.
func (t *ConnTransport) Recv(peer int, dst backend.Buffer) error {
	n := dst.Rows() * dst.DType().RowBytes(dst.Cols())
	c, b, err := t.conn(peer, 4+n)
	if err != nil {
		return err
	}
	if _, err := io.ReadFull(c, b[:4]); err != nil {
		return t.failed(peer, "receive from", err)
	}
	if got := binary.LittleEndian.Uint32(b); got != uint32(n) {
		return fmt.Errorf("dist: receive from rank %d: %d bytes, want %d (the ranks disagree on the batch)", peer, got, n)
	}
	if _, err := io.ReadFull(c, b[4:]); err != nil {
		return t.failed(peer, "receive from", err)
	}
	if err := dst.Device().Upload(dst, b[4:]); err != nil {
		return fmt.Errorf("dist: receive from rank %d: %w", peer, err)
	}
	return nil
}

// Abort fails every pending and later transfer with err.
func (t *ConnTransport) Abort(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
		close(t.aborted)
	}
	t.mu.Unlock()
	t.closeAll()
}

// Close closes the connections.
func (t *ConnTransport) Close() error {
	t.Abort(errors.New("dist: transport closed"))
	return nil
}

func (t *ConnTransport) closeAll() {
	for _, c := range t.conns {
		c.Close()
	}
}

// PipeTransports returns in-memory transports for world ranks in one process, each
// connected to its neighbours: the fake behind the Transport interface for tests.
func PipeTransports(world int) []*ConnTransport {
	conns := make([]map[int]net.Conn, world)
	for r := range conns {
		conns[r] = map[int]net.Conn{}
	}
	for r := 0; r+1 < world; r++ {
		a, b := net.Pipe()
		conns[r][r+1], conns[r+1][r] = a, b
	}
	out := make([]*ConnTransport, world)
	for r := range out {
		out[r] = NewConnTransport(conns[r])
	}
	return out
}

// DataListener is a rank's listener for its predecessor's data connection (TCP
// transport). Listen before Join and put Port in the Hello.
type DataListener struct {
	ln net.Listener
}

// ListenData listens on an ephemeral port of host ("" = every interface).
func ListenData(host string) (*DataListener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("dist: data listener: %w", err)
	}
	return &DataListener{ln: ln}, nil
}

// Port is the listener's port.
func (d *DataListener) Port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// Close stops listening.
func (d *DataListener) Close() error { return d.ln.Close() }

// ConnectTCP connects g's rank to its neighbours for data: it dials the next rank's
// data listener and accepts the previous rank on ln, within the connect deadline. The
// transport aborts when the group fails.
func ConnectTCP(ctx context.Context, g *Group, ln *DataListener) (*ConnTransport, error) {
	r, w := g.Rank(), g.World()
	deadline := time.Now().Add(g.cfg.ConnectTimeout)
	conns := map[int]net.Conn{}
	var next net.Conn
	var dialErr error
	var wg sync.WaitGroup
	if r+1 < w {
		wg.Go(func() {
			addr := g.welcome.Hellos[r+1].DataAddr
			d := net.Dialer{Deadline: deadline}
			c, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				var id [4]byte
				binary.LittleEndian.PutUint32(id[:], uint32(r))
				_, err = c.Write(id[:])
			}
			if err != nil {
				dialErr = fmt.Errorf("dist: rank %d: data connection to rank %d at %s: %v", r, r+1, addr, describe(err))
				return
			}
			next = c
		})
	}
	var acceptErr error
	if r > 0 {
		acceptErr = acceptPrev(ln, r, deadline, conns)
	}
	wg.Wait()
	if next != nil {
		conns[r+1] = next
	}
	if err := errors.Join(dialErr, acceptErr); err != nil {
		for _, c := range conns {
			c.Close()
		}
		return nil, err
	}
	t := NewConnTransport(conns)
	t.grace = 2 * g.lost()
	g.OnFail(t.Abort)
	return t, nil
}

// acceptPrev accepts rank r-1's data connection on ln before deadline.
func acceptPrev(ln *DataListener, r int, deadline time.Time, conns map[int]net.Conn) error {
	ln.ln.(*net.TCPListener).SetDeadline(deadline)
	for {
		c, err := ln.ln.Accept()
		if err != nil {
			return fmt.Errorf("dist: rank %d: no data connection from rank %d: %v", r, r-1, describe(err))
		}
		var id [4]byte
		c.SetReadDeadline(minTime(deadline, time.Now().Add(helloTimeout)))
		_, err = io.ReadFull(c, id[:])
		c.SetReadDeadline(time.Time{})
		if err != nil || binary.LittleEndian.Uint32(id[:]) != uint32(r-1) {
			c.Close()
			continue
		}
		conns[r-1] = c
		return nil
	}
}

package nccl

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/infergo/infer/backend"
)

// StreamDevice is a device NCCL can enqueue on (cuda.Device): WithStream runs fn in the
// device's context with its stream.
type StreamDevice interface {
	backend.Device
	WithStream(fn func(stream unsafe.Pointer) error) error
}

// deviceBuffer is a buffer in device memory (cuda.Buffer).
type deviceBuffer interface {
	backend.Buffer
	Ptr() uint64
	Bytes() int
}

// pollInterval is how often Transport checks the communicator for an asynchronous
// error.
const pollInterval = 100 * time.Millisecond

// communicator is what Transport needs of a Comm (a fake one in tests).
type communicator interface {
	Send(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error
	Recv(ptr uint64, bytes int, peer int, stream unsafe.Pointer) error
	AsyncError() error
	Abort() error
	Destroy() error
}

// Transport moves buffers between ranks with ncclSend/ncclRecv on each rank's device
// stream: a send is ordered after the kernels that wrote the buffer, a receive before
// the kernels that read it, and the host never waits. It implements dist.Transport.
type Transport struct {
	dev  StreamDevice
	comm communicator
	mu   sync.Mutex
	err  error
	stop chan struct{}
	wg   sync.WaitGroup
}

// NewTransport joins the NCCL communicator of world ranks that id names, as rank, on
// dev. It waits for every rank to join, or until failed is closed (the process group
// failed: a rank is gone). onError, if not nil, is called once with the communicator's
// asynchronous error (a peer lost mid-run), after the transport aborted; never for the
// end of the communicator that Abort or Close asked for.
func NewTransport(dev StreamDevice, world, rank int, id UniqueID, failed <-chan struct{}, onError func(error)) (*Transport, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	type result struct {
		c   *Comm
		err error
	}
	done := make(chan result, 1)
	go func() {
		var c *Comm
		err := dev.WithStream(func(unsafe.Pointer) error {
			var err error
			c, err = InitRank(world, id, rank)
			return err
		})
		done <- result{c, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-failed:
		return nil, errors.New("nccl: the process group failed while the ranks joined the communicator")
	}
	if r.err != nil {
		return nil, fmt.Errorf("nccl: rank %d of %d on %s: %w", rank, world, dev.Name(), r.err)
	}
	return newTransport(dev, r.c, pollInterval, onError), nil
}

// newTransport returns a transport over comm that polls its asynchronous error every
// poll.
func newTransport(dev StreamDevice, comm communicator, poll time.Duration, onError func(error)) *Transport {
	t := &Transport{dev: dev, comm: comm, stop: make(chan struct{})}
	t.wg.Go(func() { t.watch(poll, onError) })
	return t
}

// watch polls the communicator's asynchronous error until Close or Abort. An error
// after Abort was asked for (the group failed or closed: ErrAborted, or whatever the
// communicator reports while it ends) is that abort's doing, not an asynchronous
// failure: watch then stops without calling onError.
func (t *Transport) watch(poll time.Duration, onError func(error)) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		err := t.comm.AsyncError()
		if err == nil {
			continue
		}
		if t.failure() != nil || errors.Is(err, ErrAborted) {
			return
		}
		t.Abort(err)
		if onError != nil {
			onError(err)
		}
		return
	}
}

// failure is the error Abort recorded, or nil.
func (t *Transport) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// buffer checks that b lives on the transport's device and the transport still runs.
func (t *Transport) buffer(b backend.Buffer) (deviceBuffer, error) {
	if err := t.failure(); err != nil {
		return nil, err
	}
	db, ok := b.(deviceBuffer)
	if !ok || b.Device() != backend.Device(t.dev) {
		return nil, fmt.Errorf("nccl: a buffer of %s, not of %s", b.Device().Name(), t.dev.Name())
	}
	return db, nil
}

// Send enqueues src's bytes to peer on the device's stream.
func (t *Transport) Send(peer int, src backend.Buffer) error {
	b, err := t.buffer(src)
	if err != nil {
		return err
	}
	return t.dev.WithStream(func(s unsafe.Pointer) error { return t.comm.Send(b.Ptr(), b.Bytes(), peer, s) })
}

// Recv enqueues the receipt of peer's next send into dst on the device's stream.
func (t *Transport) Recv(peer int, dst backend.Buffer) error {
	b, err := t.buffer(dst)
	if err != nil {
		return err
	}
	return t.dev.WithStream(func(s unsafe.Pointer) error { return t.comm.Recv(b.Ptr(), b.Bytes(), peer, s) })
}

// Abort fails the pending and later transfers with err: ncclCommAbort ends the NCCL
// kernels still waiting on a peer, so the device's stream drains.
func (t *Transport) Abort(err error) {
	t.mu.Lock()
	first := t.err == nil
	if first {
		t.err = err
	}
	t.mu.Unlock()
	if first {
		t.comm.Abort()
	}
}

// Close stops polling and destroys the communicator (after Abort, nothing is left).
func (t *Transport) Close() error {
	select {
	case <-t.stop:
		return nil
	default:
	}
	close(t.stop)
	t.wg.Wait()
	return t.comm.Destroy()
}

// Op is one send or receive of a Batch.
type Op struct {
	Peer int
	Buf  backend.Buffer
	Send bool // a send to Peer, else a receive from it
}

// Batch enqueues ops as one NCCL group on the device's stream, so that they are in
// flight together (ncclGroupStart/End around them, on one thread).
func (t *Transport) Batch(ops []Op) error {
	bufs := make([]deviceBuffer, len(ops))
	for i, op := range ops {
		b, err := t.buffer(op.Buf)
		if err != nil {
			return err
		}
		bufs[i] = b
	}
	return t.dev.WithStream(func(s unsafe.Pointer) error {
		if err := GroupStart(); err != nil {
			return err
		}
		var errs []error
		for i, op := range ops {
			if op.Send {
				errs = append(errs, t.comm.Send(bufs[i].Ptr(), bufs[i].Bytes(), op.Peer, s))
			} else {
				errs = append(errs, t.comm.Recv(bufs[i].Ptr(), bufs[i].Bytes(), op.Peer, s))
			}
		}
		errs = append(errs, GroupEnd())
		return errors.Join(errs...)
	})
}

package nccl

import (
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// fakeComm is a communicator without NCCL: asyncErr is what AsyncError reports until
// Abort, after which it reports afterAbort (ErrAborted, as a Comm's calls do, or what a
// communicator in the middle of ending might report).
type fakeComm struct {
	mu         sync.Mutex
	asyncErr   error
	afterAbort error
	aborts     int
	destroyed  bool
}

func (c *fakeComm) Send(uint64, int, int, unsafe.Pointer) error { return nil }
func (c *fakeComm) Recv(uint64, int, int, unsafe.Pointer) error { return nil }

func (c *fakeComm) AsyncError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborts > 0 {
		return c.afterAbort
	}
	return c.asyncErr
}

func (c *fakeComm) Abort() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborts++
	return nil
}

func (c *fakeComm) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destroyed = true
	return nil
}

func (c *fakeComm) set(err error) {
	c.mu.Lock()
	c.asyncErr = err
	c.mu.Unlock()
}

const testPoll = time.Millisecond

// TestWatchReportsAsyncError: a failure the communicator reports on its own (a peer
// gone) aborts the transport and reaches onError once.
func TestWatchReportsAsyncError(t *testing.T) {
	c := &fakeComm{afterAbort: ErrAborted}
	got := make(chan error, 4)
	tr := newTransport(nil, c, testPoll, func(err error) { got <- err })
	time.Sleep(10 * testPoll)
	remote := errors.New("nccl: communicator: ncclRemoteError")
	c.set(remote)
	select {
	case err := <-got:
		if err != remote {
			t.Fatalf("onError(%v), want the communicator's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the asynchronous error was not reported")
	}
	if tr.failure() == nil || c.aborts != 1 {
		t.Errorf("after an asynchronous error: failure %v, %d ncclCommAbort calls", tr.failure(), c.aborts)
	}
	tr.Close()
	if len(got) != 0 {
		t.Errorf("onError called again: %v", <-got)
	}
}

// TestWatchIgnoresRequestedAbort: after Abort (the group failed or closed), what the
// communicator reports while it ends is not an asynchronous error: onError is never
// called, and later transfers fail with the abort's reason.
func TestWatchIgnoresRequestedAbort(t *testing.T) {
	for _, tt := range []struct {
		name       string
		afterAbort error
	}{
		{"ErrAborted", ErrAborted},
		{"an error the abort caused", errors.New("nccl: communicator: ncclRemoteError")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeComm{afterAbort: tt.afterAbort}
			got := make(chan error, 4)
			tr := newTransport(nil, c, testPoll, func(err error) { got <- err })
			reason := errors.New("dist: rank 1 aborted the run")
			tr.Abort(reason)
			time.Sleep(50 * testPoll)
			select {
			case err := <-got:
				t.Fatalf("a requested abort was reported as an asynchronous error: %v", err)
			default:
			}
			if _, err := tr.buffer(nil); err != reason {
				t.Errorf("a transfer after Abort: %v, want the abort's reason", err)
			}
			if c.aborts != 1 {
				t.Errorf("%d ncclCommAbort calls, want 1", c.aborts)
			}
			tr.Close()
			if !c.destroyed {
				t.Error("Close did not destroy the communicator")
			}
		})
	}
}

// TestCloseStopsWatching: a transport closed without a failure reports nothing.
func TestCloseStopsWatching(t *testing.T) {
	c := &fakeComm{afterAbort: ErrAborted}
	called := false
	tr := newTransport(nil, c, testPoll, func(error) { called = true })
	time.Sleep(5 * testPoll)
	if err := tr.Close(); err != nil || called || c.aborts != 0 || !c.destroyed {
		t.Errorf("Close: %v; onError called %v, %d aborts, destroyed %v", err, called, c.aborts, c.destroyed)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

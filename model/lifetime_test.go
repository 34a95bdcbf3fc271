package model

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/split"
	"github.com/infergo/infer/tensor"
)

// countingDevice is a CPU device that counts the buffers allocated and not freed.
type countingDevice struct {
	*cpu.Device
	mu   sync.Mutex
	live map[backend.Buffer]bool
}

func newCountingDevice() *countingDevice {
	return &countingDevice{Device: cpu.New(1), live: map[backend.Buffer]bool{}}
}

func (d *countingDevice) Alloc(dt tensor.DType, rows, cols int) (backend.Buffer, error) {
	b, err := d.Device.Alloc(dt, rows, cols)
	if err == nil {
		d.mu.Lock()
		d.live[b] = true
		d.mu.Unlock()
	}
	return b, err
}

func (d *countingDevice) Free(b backend.Buffer) {
	d.mu.Lock()
	delete(d.live, b)
	d.mu.Unlock()
	d.Device.Free(b)
}

func (d *countingDevice) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.live)
}

// TestCloseReleasesSessions closes a model with two sessions open: Close frees their
// buffers on the caller's device, later calls fail with ErrClosed, and closing the
// sessions afterwards is a no-op.
func TestCloseReleasesSessions(t *testing.T) {
	path := newTiny(3).file(t, tensor.F32)
	dev := newCountingDevice()
	m, err := Load(path, Options{Device: dev, ContextSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	weights := dev.Live()
	var ss []*Session
	for range 2 {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Eval([]int32{1, 2, 3}, false); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	if n := m.OpenSessions(); n != 2 {
		t.Fatalf("%d open sessions, want 2", n)
	}
	b, err := m.NewBatch(BatchOptions{Rows: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Eval(context.Background(), []SeqInput{{Session: ss[0], Tokens: []int32{4}, Logits: 1}, {Session: ss[1], Tokens: []int32{5}, Logits: 1}}); err != nil {
		t.Fatal(err)
	}
	if dev.Live() <= weights {
		t.Fatalf("%d buffers with two sessions, %d without", dev.Live(), weights)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := dev.Live(); n != 0 {
		t.Errorf("%d buffers left on the device after Model.Close with sessions open", n)
	}
	if _, err := ss[0].Eval([]int32{4}, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Eval after Model.Close: %v, want ErrClosed", err)
	}
	if _, err := m.NewSession(); !errors.Is(err, ErrClosed) {
		t.Errorf("NewSession after Model.Close: %v, want ErrClosed", err)
	}
	if _, err := b.Eval(context.Background(), []SeqInput{{Session: ss[0], Tokens: []int32{6}}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Batch.Eval after Model.Close: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Batch.Close after Model.Close: %v", err)
	}
	for _, s := range ss {
		if err := s.Close(); err != nil {
			t.Errorf("Session.Close after Model.Close: %v", err)
		}
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Model.Close: %v", err)
	}
}

// TestSessionCloseUntracks checks that a session closed before the model frees its
// buffers at once and is no longer counted.
func TestSessionCloseUntracks(t *testing.T) {
	path := newTiny(4).file(t, tensor.F32)
	dev := newCountingDevice()
	m, err := Load(path, Options{Device: dev, ContextSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	weights := dev.Live()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m.OpenSessions() != 0 || dev.Live() != weights {
		t.Errorf("after Session.Close: %d open sessions, %d buffers (weights %d)", m.OpenSessions(), dev.Live(), weights)
	}
	if _, err := s.Eval([]int32{1}, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Eval on a closed session: %v, want ErrClosed", err)
	}
}

// TestCloseWaitsForEval closes the model while other goroutines evaluate on their
// sessions: every Eval either completes with logits or fails with ErrClosed, never
// reads freed buffers (run with -race), and Close frees everything.
func TestCloseWaitsForEval(t *testing.T) {
	path := newTiny(5).file(t, tensor.F32)
	dev := newCountingDevice()
	m, err := Load(path, Options{Device: dev, ContextSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				if s.Pos() >= s.Ctx() {
					s.Reset()
				}
				if _, err := s.Eval([]int32{int32(1 + (g+i)%10)}, false); err != nil {
					if !errors.Is(err, ErrClosed) {
						errs <- err
					}
					return
				}
			}
		}()
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := dev.Live(); n != 0 {
		t.Errorf("%d buffers left after Close", n)
	}
}

// TestLoadContextCancelled checks that a cancelled load stops, releases what it placed
// and says why.
func TestLoadContextCancelled(t *testing.T) {
	path := newTiny(6).file(t, tensor.F32)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dev := newCountingDevice()
	if _, err := LoadContext(ctx, path, Options{Device: dev}); !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadContext with a cancelled context: %v, want context.Canceled", err)
	}
	// Cancelled between two tensors: a device whose third allocation cancels.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cd := &cancellingDevice{countingDevice: newCountingDevice(), after: 3, cancel: cancel}
	_, err := LoadContext(ctx, path, Options{Device: cd})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadContext cancelled mid-way: %v, want context.Canceled", err)
	}
	if cd.allocs != 3 {
		t.Errorf("%d tensors allocated, want the load to stop after the 3rd", cd.allocs)
	}
}

// cancellingDevice cancels a context when the after-th tensor is placed on it (the CPU
// device places weights with Wrap).
type cancellingDevice struct {
	*countingDevice
	allocs, after int
	cancel        func()
}

func (d *cancellingDevice) Wrap(dt tensor.DType, rows, cols int, data []byte) (backend.Buffer, error) {
	d.allocs++
	if d.allocs == d.after {
		d.cancel()
	}
	return d.countingDevice.Wrap(dt, rows, cols, data)
}

// smallDevice is a CPU device that reports little free memory.
type smallDevice struct{ *cpu.Device }

func (smallDevice) MemInfo() (free, total uint64, err error) { return 4 << 10, 1 << 20, nil }

// TestDoesNotFit checks that a model larger than the devices' free memory is an error
// that errors.Is recognises as ErrDoesNotFit (and split's) and that names the device.
func TestDoesNotFit(t *testing.T) {
	path := newTiny(7).file(t, tensor.F32)
	dev := smallDevice{cpu.New(1)}
	for _, load := range []func() error{
		func() error { _, err := Load(path, Options{Device: dev, ContextSize: 32}); return err },
		func() error { _, err := PlanFor(path, Options{Device: dev, ContextSize: 32}); return err },
	} {
		err := load()
		if !errors.Is(err, ErrDoesNotFit) || !errors.Is(err, split.ErrDoesNotFit) || !strings.Contains(err.Error(), "needs") {
			t.Errorf("%v: want ErrDoesNotFit naming the shortfall", err)
		}
	}
}

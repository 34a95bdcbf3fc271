package dist

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/tensor"
)

func TestPipeTransportMovesBuffers(t *testing.T) {
	dev := cpu.New(1)
	defer dev.Close()
	ts := PipeTransports(2)
	src, _ := dev.Alloc(tensor.F32, 3, 4)
	dst, _ := dev.Alloc(tensor.F32, 3, 4)
	want := tensor.Float32Bytes([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12})
	dev.Upload(src, want)
	errc := make(chan error, 1)
	go func() { errc <- ts[0].Send(1, src) }()
	if err := ts[1].Recv(0, dst); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	dev.Download(got, dst)
	if string(got) != string(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A receive of the wrong size is an error, not a misread.
	small, _ := dev.Alloc(tensor.F32, 1, 4)
	go func() { errc <- ts[0].Send(1, src) }()
	if err := ts[1].Recv(0, small); err == nil || !strings.Contains(err.Error(), "48 bytes, want 16") {
		t.Errorf("wrong size: %v", err)
	}
}

func TestTransportAbortUnblocksRecv(t *testing.T) {
	dev := cpu.New(1)
	defer dev.Close()
	ts := PipeTransports(2)
	dst, _ := dev.Alloc(tensor.F32, 1, 4)
	cause := errors.New("rank 0 lost")
	go func() { time.Sleep(50 * time.Millisecond); ts[1].Abort(cause) }()
	err := within(t, time.Second, func() error { return ts[1].Recv(0, dst) })
	if !errors.Is(err, cause) {
		t.Errorf("got %v, want the abort cause", err)
	}
}

func TestConnectTCPFollowsTheGroup(t *testing.T) {
	cfg, ln := testConfig(t, 3)
	lns := make([]*DataListener, 3)
	for r := range lns {
		var err error
		if lns[r], err = ListenData("127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		defer lns[r].Close()
	}
	gs, errs := joinAll(context.Background(), cfg, ln, func(r int) Hello {
		h := sameFile(r)
		h.DataPort = lns[r].Port()
		return h
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	ts := make([]*ConnTransport, 3)
	done := make(chan error, 3)
	for r := range 3 {
		go func() {
			var err error
			ts[r], err = ConnectTCP(context.Background(), gs[r], lns[r])
			done <- err
		}()
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	dev := cpu.New(1)
	defer dev.Close()
	a, _ := dev.Alloc(tensor.F32, 2, 2)
	b, _ := dev.Alloc(tensor.F32, 2, 2)
	go func() { done <- ts[1].Send(2, a) }()
	if err := ts[2].Recv(1, b); err != nil {
		t.Fatal(err)
	}
	<-done
	// Rank 1 fails: rank 2's pending receive from it ends with the group's error.
	go func() { time.Sleep(50 * time.Millisecond); gs[1].Fail(errors.New("rank 1: out of memory")) }()
	err := within(t, 2*time.Second, func() error { return ts[2].Recv(1, b) })
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("rank 2: %v", err)
	}
	for _, g := range gs {
		g.Close()
	}
}

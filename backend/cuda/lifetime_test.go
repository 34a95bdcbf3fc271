//go:build cgo

package cuda

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// f32s uploads v into a new (1, len(v)) F32 buffer of d.
func f32s(t testing.TB, d *Device, v []float32) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(tensor.F32, 1, len(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Upload(b, tensor.Float32Bytes(v)); err != nil {
		t.Fatal(err)
	}
	return b
}

// read downloads b, a one-row F32 buffer.
func read(t *testing.T, b backend.Buffer) []float32 {
	t.Helper()
	got := make([]float32, b.Cols())
	if err := b.Device().Download(tensor.Float32Bytes(got), b); err != nil {
		t.Fatal(err)
	}
	return got
}

// filled is n copies of v.
func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestCloseTwice closes one of two virtual devices on GPU 0 twice: the second Close
// releases nothing, so the primary context the other Device retains stays usable; every
// call on the closed device fails instead of reaching the driver.
func TestCloseTwice(t *testing.T) {
	devs := openOrdinals(t, 0, 0)
	a, b := devs[0], devs[1]
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	x := f32s(t, b, filled(1000, 1.5))
	b.Add(x, x)
	for i, v := range read(t, x) {
		if v != 3 {
			t.Fatalf("after the sibling closed twice: [%d] = %g, want 3", i, v)
		}
	}
	if _, err := a.Alloc(tensor.F32, 1, 4); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Alloc on a closed device: %v, want an error saying closed", err)
	}
	if err := a.Sync(); err == nil {
		t.Error("Sync on a closed device succeeded")
	}
}

// TestCaptureExcludesOthers records a graph while another goroutine allocates, uploads,
// runs kernels, downloads and synchronises on the same device and on a virtual device of
// the same GPU: the other goroutine's calls wait for the capture instead of being
// captured or breaking it, and both results are right.
func TestCaptureExcludesOthers(t *testing.T) {
	devs := openOrdinals(t, 0, 0)
	d, sib := devs[0], devs[1]
	const n = 4096
	x, y := f32s(t, d, filled(n, 1)), f32s(t, d, filled(n, 2))
	started := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, other := range []*Device{d, sib} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			for i := range 20 {
				z, err := other.Alloc(tensor.F32, 1, n)
				if err != nil {
					errs <- err
					return
				}
				if err := other.Upload(z, tensor.Float32Bytes(filled(n, float32(i)))); err != nil {
					errs <- err
					return
				}
				other.Add(z, z)
				got := make([]float32, n)
				if err := other.Download(tensor.Float32Bytes(got), z); err != nil {
					errs <- err
					return
				}
				if got[0] != 2*float32(i) || got[n-1] != 2*float32(i) {
					errs <- fmt.Errorf("%s round %d: %g, want %g", other.name, i, got[0], 2*float32(i))
					return
				}
				other.Free(z)
			}
			errs <- other.Sync()
		}()
	}
	g, err := d.Capture(func(k backend.Kernels) error {
		k.Add(x, y)
		close(started)
		time.Sleep(50 * time.Millisecond) // the others try to get in now
		k.Add(x, y)
		return nil
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Launch(); err != nil {
		t.Fatal(err)
	}
	for i, v := range read(t, x) {
		if v != 5 { // 1 + 2 + 2: the graph ran once, the capture ran nothing
			t.Fatalf("x[%d] = %g after one replay, want 5", i, v)
		}
	}
}

// TestCaptureRefusesNonKernels checks that a capture's Kernels accept only kernel
// methods: an Upload through them is refused rather than breaking the capture, and the
// capture reports it.
func TestCaptureRefusesNonKernels(t *testing.T) {
	d := openTest(t)
	x := f32s(t, d, filled(256, 1))
	_, err := d.Capture(func(k backend.Kernels) error {
		k.Add(x, x)
		return k.(backend.Device).Upload(x, tensor.Float32Bytes(filled(256, 3)))
	})
	if err == nil || !strings.Contains(err.Error(), "only kernel methods") {
		t.Fatalf("Upload inside a capture: %v, want it refused", err)
	}
	if err := d.Sync(); err != nil {
		t.Fatalf("device failed after a refused capture: %v", err)
	}
	y := f32s(t, d, filled(256, 4)) // the device still works
	if got := read(t, y); got[0] != 4 {
		t.Fatalf("after a refused capture: %g, want 4", got[0])
	}
}

// TestRecordConcurrent has several goroutines each record and replay its own step
// (x += y on its own buffers) many times, interleaved with uploads: every key is
// captured once, and every goroutine sees its own sums.
func TestRecordConcurrent(t *testing.T) {
	d := openTest(t)
	const workers, steps, n = 8, 30, 2048
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	calls := make([]int, workers)
	for w := range workers {
		x, y := f32s(t, d, filled(n, 0)), f32s(t, d, filled(n, float32(w+1)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("worker %d", w)
			for s := 1; s <= steps; s++ {
				if err := d.Upload(y, tensor.Float32Bytes(filled(n, float32(w+s)))); err != nil {
					errs <- err
					return
				}
				if err := d.Record(key, func(k backend.Kernels) { calls[w]++; k.Add(x, y) }); err != nil {
					errs <- err
					return
				}
				got := make([]float32, n)
				if err := d.Download(tensor.Float32Bytes(got), x); err != nil {
					errs <- err
					return
				}
				want := float32(s*w + s*(s+1)/2) // Σ (w + i) for i = 1..s
				if got[0] != want || got[n-1] != want {
					errs <- fmt.Errorf("worker %d step %d: x = %g, want %g", w, s, got[0], want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w, c := range calls {
		if c != 1 {
			t.Errorf("worker %d: enqueue called %d times, want 1", w, c)
		}
	}
}

// TestTransferNeedsTable checks that a transfer between two CUDA devices without a peer
// table, or after the table closed, is an error rather than a silent blocking copy
// through pageable host memory.
func TestTransferNeedsTable(t *testing.T) {
	devs := openOrdinals(t, 0, 0)
	a, b := devs[0], devs[1]
	src, dst := f32s(t, a, filled(64, 1)), f32s(t, b, filled(64, 0))
	if ok, err := b.TransferFrom(dst, src); !ok || err == nil || !strings.Contains(err.Error(), "peer table") {
		t.Errorf("without a table: ok %v, %v; want an error naming the peer table", ok, err)
	}
	p, err := NewPeers(devs, [][2]int{{0, 1}}, PeerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TransferFrom(dst, src); !ok || err != nil {
		t.Fatalf("with the table: %v, %v", ok, err)
	}
	if got := read(t, dst); got[0] != 1 {
		t.Fatalf("transferred %g, want 1", got[0])
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TransferFrom(dst, src); !ok || err == nil {
		t.Errorf("after the table closed: ok %v, %v; want an error", ok, err)
	}
}

// TestQ8KeyStructural checks the quantized-activation cache: a write by any call that
// does not report its writes (here an Upload and a same-device copy) forgets it, so the
// next mat-vec quantizes the new values.
func TestQ8KeyStructural(t *testing.T) {
	d := openTest(t)
	const in, out = 256, 64
	w, err := d.Alloc(tensor.Q8_0, out, in)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, tensor.Q8_0.RowBytes(in)*out)
	for r := range out { // every block: scale 1/64 (f16 0x2400), quants r+i-ish
		for b := range in / 32 {
			blk := raw[(r*in/32+b)*34:]
			blk[0], blk[1] = 0x00, 0x24
			for i := range 32 {
				blk[2+i] = byte(int8((r + i + b) % 7))
			}
		}
	}
	if err := d.Upload(w, raw); err != nil {
		t.Fatal(err)
	}
	x, y := f32s(t, d, filled(in, 1)), f32s(t, d, filled(out, 0))
	src := f32s(t, d, filled(in, 2))
	matvec := func() []float32 { d.MatMul(y, w, x); return read(t, y) }
	one := matvec()
	if err := d.Upload(x, tensor.Float32Bytes(filled(in, 2))); err != nil {
		t.Fatal(err)
	}
	two := matvec()
	for i := range one {
		if two[i] != 2*one[i] {
			t.Fatalf("after an Upload to x: y[%d] = %g, want %g", i, two[i], 2*one[i])
		}
	}
	d.Copy(x, f32s(t, d, filled(in, 1)))
	if got := matvec(); got[0] != one[0] {
		t.Fatalf("after a Copy into x: y[0] = %g, want %g", got[0], one[0])
	}
	if ok, err := d.TransferFrom(x, src); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := matvec(); got[0] != two[0] {
		t.Fatalf("after a transfer into x: y[0] = %g, want %g", got[0], two[0])
	}
}

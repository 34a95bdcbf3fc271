//go:build cgo

package cuda

import (
	"bytes"
	"errors"
	"flag"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/backendtest"
	"github.com/infergo/infer/tensor"
)

// ptxDir, when set, loads kernel PTX from a directory instead of the embedded copy: on
// the GPU machine, freshly compiled kernels are tested before they are committed.
var ptxDir = flag.String("cuda.ptx", "", "load kernel PTX from this `dir` instead of the embedded copy")

// openTest opens device 0 for t, or skips t when there is no driver or no device.
func openTest(t testing.TB) *Device { return openTestWith(t, 0, Options{}) }

// openTestWith opens GPU ordinal with o for t (kernels from -cuda.ptx when set), closed
// when t ends, or skips t when there is no driver or no device.
func openTestWith(t testing.TB, ordinal int, o Options) *Device {
	t.Helper()
	if *ptxDir != "" {
		o.KernelDir = *ptxDir
	}
	d, err := openWith(ordinal, embeddedPTX, o)
	if errors.Is(err, ErrNoDriver) {
		t.Skipf("cuda: no CUDA driver: %v", err)
	}
	if errors.Is(err, ErrNoDevice) {
		t.Skipf("cuda: no CUDA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close %s: %v", d.name, err)
		}
	})
	return d
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Device { return openTest(t) })
}

func TestOpenWithoutDriver(t *testing.T) {
	if err := load(); err == nil {
		t.Skip("a CUDA driver is present")
	}
	_, err := Open(0)
	if !errors.Is(err, ErrNoDriver) || !bytes.Contains([]byte(err.Error()), []byte("no CUDA driver")) {
		t.Fatalf("Open without a driver: %v, want an error saying no CUDA driver", err)
	}
}

func TestDevices(t *testing.T) {
	d := openTest(t)
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		t.Logf("device %d: %s, %.1f GiB (%.1f free), sm_%d%d, %d SMs, VMM %v", in.Ordinal, in.Name,
			float64(in.TotalMemory)/(1<<30), float64(in.FreeMemory)/(1<<30), in.Major, in.Minor, in.SMs, in.VMM)
	}
	t.Logf("%s: cuBLAS %v, VMM granularity %d", d.Name(), d.HasBLAS(), d.Granularity())
}

// TestUploadDownload moves more than the staging slots hold, through a row slice, then
// payloads over several rounds of the grown ring (wrapping it), of sizes no multiple of
// a slot.
func TestUploadDownload(t *testing.T) {
	d := openTest(t)
	const rows, cols = 5, 1 << 20 // 20 MiB of F32, more than two slots
	b, err := d.Alloc(tensor.F32, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	src := make([]byte, rows*cols*4)
	for i := range src {
		src[i] = byte(i*7 + i>>12)
	}
	if err := d.Upload(b, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(src))
	if err := d.Download(got, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("download differs from upload")
	}
	row := make([]byte, cols*4)
	if err := d.Download(row, b.Slice(3, 1)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(row, src[3*cols*4:4*cols*4]) {
		t.Fatal("row 3 differs")
	}
	for _, n := range []int{1, 3<<20 + 7, 80<<20 + 12345, 150<<20 + 1} { // F32 elements
		b, err := d.Alloc(tensor.F32, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, 4*n)
		for i := range src {
			src[i] = byte(i*13 + i>>10 + n)
		}
		if err := d.Upload(b, src); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(src))
		if err := d.Download(got, b); err != nil {
			t.Fatal(err)
		}
		d.Free(b)
		if i := firstDiff(got, src); i >= 0 {
			t.Fatalf("%d bytes: download differs from upload at byte %d", len(src), i)
		}
	}
}

// TestAllocMapped checks a VMM buffer: zeroed, rounded to the granularity, usable by
// kernels.
func TestAllocMapped(t *testing.T) {
	d := openTest(t)
	if d.Granularity() == 0 {
		t.Skip("cuda: device without VMM")
	}
	x, err := d.AllocMapped(tensor.F32, 3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(x)
	if x.alloc.size%d.Granularity() != 0 {
		t.Fatalf("mapped size %d not a multiple of %d", x.alloc.size, d.Granularity())
	}
	one := make([]float32, 3000)
	for i := range one {
		one[i] = float32(i)
	}
	y, _ := d.Alloc(tensor.F32, 3, 1000)
	defer d.Free(y)
	if err := d.Upload(y, tensor.Float32Bytes(one)); err != nil {
		t.Fatal(err)
	}
	d.Add(x, y) // x was zero
	d.Add(x, y)
	got := make([]float32, 3000)
	if err := d.Download(tensor.Float32Bytes(got), x); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 2*float32(i) {
			t.Fatalf("[%d] = %g, want %g", i, v, 2*float32(i))
		}
	}
}

// TestGraphReplay records Add once and replays it; the graph sees new uploads.
func TestGraphReplay(t *testing.T) {
	d := openTest(t)
	x, _ := d.Alloc(tensor.F32, 1, 256)
	y, _ := d.Alloc(tensor.F32, 1, 256)
	defer d.Free(x)
	defer d.Free(y)
	g, err := d.Capture(func(k backend.Kernels) error { k.Add(x, y); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	v := make([]float32, 256)
	for step := 1; step <= 3; step++ {
		for i := range v {
			v[i] = float32(step)
		}
		if err := d.Upload(y, tensor.Float32Bytes(v)); err != nil {
			t.Fatal(err)
		}
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Download(tensor.Float32Bytes(v), x); err != nil {
		t.Fatal(err)
	}
	if v[0] != 6 || v[255] != 6 {
		t.Fatalf("after replays x = %g, want 1+2+3", v[0])
	}
}

// TestStickyError checks that a failed launch is reported by Sync and later calls.
func TestStickyError(t *testing.T) {
	d := openTest(t)
	d.enqueue("test", func() error { return d.launch("no_such_kernel", dim3{1, 1, 1}, dim3{1, 1, 1}, new(args)) })
	err1, err2 := d.Sync(), d.Sync()
	if err1 == nil || err2 == nil {
		t.Fatalf("Sync after a failed launch: %v, %v", err1, err2)
	}
}

// TestTransferSameDevice checks TransferFrom between two buffers of one device, the
// virtual-device case of a split plan.
func TestTransferSameDevice(t *testing.T) {
	d := openTest(t)
	src, _ := d.Alloc(tensor.F32, 2, 300)
	dst, _ := d.Alloc(tensor.F32, 2, 300)
	defer d.Free(src)
	defer d.Free(dst)
	v := make([]float32, 600)
	for i := range v {
		v[i] = float32(i) - 7
	}
	if err := d.Upload(src, tensor.Float32Bytes(v)); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.TransferFrom(dst, src); !ok || err != nil {
		t.Fatalf("TransferFrom: %v, %v", ok, err)
	}
	got := make([]float32, 600)
	if err := d.Download(tensor.Float32Bytes(got), dst); err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("[%d] = %g, want %g", i, got[i], v[i])
		}
	}
}

// devBuf allocates a dt (rows, cols) buffer on d, freed when the test ends, holding raw
// unless raw is nil.
func devBuf(t testing.TB, d *Device, dt tensor.DType, rows, cols int, raw []byte) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(dt, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(b) })
	if raw != nil {
		if err := d.Upload(b, raw); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

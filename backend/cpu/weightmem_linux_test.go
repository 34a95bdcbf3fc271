package cpu

import (
	"runtime"
	"testing"
	"time"

	"github.com/infergo/infer/tensor"
)

// TestWeightMemReleased: the mapping of a wrapped matrix's panels stays while the
// buffer is live and is unmapped when the buffer is collected without Free (Free's
// release is TestMatMulQ4_0Panels's).
func TestWeightMemReleased(t *testing.T) {
	const in, out = 2048, 2048 // 2.4 MB of panels: mapped (above hugePage)
	d := New(1)
	defer d.Close()
	x, _ := d.Alloc(tensor.F32, 1, in)
	dst, _ := d.Alloc(tensor.F32, 1, out)
	mapped := func() *mapping {
		w, err := d.Wrap(tensor.Q4_0, out, in, make([]byte, out*tensor.Q4_0.RowBytes(in)))
		if err != nil {
			t.Fatal(err)
		}
		d.MatMul(dst, w, x)
		m := w.(*Buffer).mapped
		if m == nil {
			t.Skipf("level %v packs no panels, or the mapping failed", tensor.Level())
		}
		if m.done.Load() {
			t.Fatal("mapping released while its buffer is live")
		}
		return m
	}
	m := mapped()
	for start := time.Now(); !m.done.Load(); runtime.GC() {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the mapping of a collected buffer was not released")
		}
		time.Sleep(time.Millisecond)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

//go:build cgo

package cuda

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestQuantizedActivationReuse checks that MatMuls sharing an input reuse its int8 copy
// only while it is current: after an Upload or a kernel writes the input, and inside a
// recorded graph replayed on new input, the results match a MatMul from a fresh buffer.
func TestQuantizedActivationReuse(t *testing.T) {
	d := openTest(t)
	const out, in = 64, 512
	r := rand.New(rand.NewPCG(7, 8))
	wq := make([]byte, tensor.Q4_0.RowBytes(in)*out)
	if err := tensor.Quantize(tensor.Q4_0, wq, randoms(r, out*in)); err != nil {
		t.Fatal(err)
	}
	buf := func(dt tensor.DType, rows, cols int, raw []byte) backend.Buffer {
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
	w := buf(tensor.Q4_0, out, in, wq)
	x, y := buf(tensor.F32, 1, in, nil), buf(tensor.F32, 1, out, nil)
	get := func(b backend.Buffer) []byte {
		raw := make([]byte, 4*b.Cols())
		if err := d.Download(raw, b); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	// fresh computes w·v from a buffer no MatMul has seen.
	fresh := func(v []byte) []byte {
		fx, fy := buf(tensor.F32, 1, in, v), buf(tensor.F32, 1, out, nil)
		d.MatMul(fy, w, fx)
		return get(fy)
	}
	v1, v2 := tensor.Float32Bytes(randoms(r, in)), tensor.Float32Bytes(randoms(r, in))
	d.Upload(x, v1)
	d.MatMul(y, w, x)
	d.MatMul(y, w, x) // reuses the quantized x
	if !bytes.Equal(get(y), fresh(v1)) {
		t.Fatal("second MatMul on the same input differs")
	}
	d.Upload(x, v2)
	d.MatMul(y, w, x)
	if !bytes.Equal(get(y), fresh(v2)) {
		t.Fatal("MatMul after Upload used the old input")
	}
	d.Add(x, x) // x = 2·v2, written by a kernel
	d.MatMul(y, w, x)
	twice := tensor.Float32s(append([]byte(nil), v2...))
	for i := range twice {
		twice[i] *= 2
	}
	if !bytes.Equal(get(y), fresh(tensor.Float32Bytes(twice))) {
		t.Fatal("MatMul after Add used the old input")
	}
	g, err := d.Capture(func(k backend.Kernels) error { k.MatMul(y, w, x); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d.Upload(x, v1)
	g.Launch()
	if !bytes.Equal(get(y), fresh(v1)) {
		t.Fatal("replayed MatMul used the input of the recording")
	}
}

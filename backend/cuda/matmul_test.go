//go:build cgo

package cuda

import (
	"bytes"
	"math"
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
	w := devBuf(t, d, tensor.Q4_0, out, in, wq)
	x, y := devBuf(t, d, tensor.F32, 1, in, nil), devBuf(t, d, tensor.F32, 1, out, nil)
	get := func(b backend.Buffer) []byte {
		raw := make([]byte, 4*b.Cols())
		if err := d.Download(raw, b); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	// fresh computes w·v from a buffer no MatMul has seen.
	fresh := func(v []byte) []byte {
		fx, fy := devBuf(t, d, tensor.F32, 1, in, v), devBuf(t, d, tensor.F32, 1, out, nil)
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

// TestDequantAhead checks the prefill MatMuls whose weights are dequantized on the side
// stream (dequant_ahead.go) against the same MatMuls with the dequantization on the
// compute stream: bit-identical, over weights of several types and shapes (so both
// slots are reused and grow), each uploaded just before its first MatMul (the side
// stream must wait for the upload), and a weight rewritten between two MatMuls.
func TestDequantAhead(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(21, 22))
	const n = 1024 // rows: the cuBLAS path
	type job struct {
		dt      tensor.DType
		out, in int
	}
	jobs := []job{{tensor.Q4_0, 96, 512}, {tensor.Q4_K, 256, 1024}, {tensor.Q6_K, 64, 256},
		{tensor.Q8_0, 300, 768}, {tensor.Q5_K, 128, 512}, {tensor.Q4_0, 512, 2048}}
	upload := func(b backend.Buffer, raw []byte) {
		if err := d.Upload(b, raw); err != nil {
			t.Fatal(err)
		}
	}
	weight := func(j job) []byte {
		raw := make([]byte, j.dt.RowBytes(j.in)*j.out)
		if err := tensor.Quantize(j.dt, raw, randoms(r, j.out*j.in)); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var rewrite []byte // jobs[2]'s second weight
	run := func(ahead bool, ws [][]byte, xs [][]float32) [][]byte {
		d.aheadRows = math.MaxInt
		if ahead {
			d.aheadRows = gemmMinRows
		}
		defer func() { d.aheadRows = aheadMinRows }()
		var outs []backend.Buffer
		for i, j := range jobs {
			w, x, y := devBuf(t, d, j.dt, j.out, j.in, nil), devBuf(t, d, tensor.F32, n, j.in, nil), devBuf(t, d, tensor.F32, n, j.out, nil)
			upload(w, ws[i])
			upload(x, tensor.Float32Bytes(xs[i]))
			d.MatMul(y, w, x)
			outs = append(outs, y)
			if i == 2 { // rewrite a weight used before: the next MatMul must see the new one
				upload(w, rewrite)
				y2 := devBuf(t, d, tensor.F32, n, j.out, nil)
				d.MatMul(y2, w, x)
				outs = append(outs, y2)
			}
		}
		var got [][]byte
		for _, y := range outs {
			raw := make([]byte, 4*y.Rows()*y.Cols())
			if err := d.Download(raw, y); err != nil {
				t.Fatal(err)
			}
			got = append(got, raw)
		}
		return got
	}
	var ws [][]byte
	var xs [][]float32
	for _, j := range jobs {
		ws, xs = append(ws, weight(j)), append(xs, randoms(r, n*j.in))
	}
	rewrite = weight(jobs[2])
	want, got := run(false, ws, xs), run(true, ws, xs)
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("MatMul %d: side-stream dequantization differs from the serial path", i)
		}
	}
	if d.ahead == nil {
		t.Fatal("the side stream was never used")
	}
	// Uploads only mark the device; the dequantization after them recorded the event
	// and cleared the mark.
	if d.uploaded {
		t.Fatal("the mark of the last upload outlived the dequantization after it")
	}
	upload(devBuf(t, d, tensor.F32, 1, 64, nil), make([]byte, 256))
	if !d.uploaded {
		t.Fatal("an Upload after the side stream exists left no mark for the next dequantization")
	}
}

// TestDequantAheadMinRows checks that a batch below aheadMinRows (the mat-vec path)
// does not start the side stream and that one of aheadMinRows rows does start it.
func TestDequantAheadMinRows(t *testing.T) {
	d := openTest(t)
	if !d.HasBLAS() || !d.has(dequant8Kernel(tensor.Q4_0)) {
		t.Skip("no cuBLAS or no dequant8 kernel: prompt batches do not dequantize")
	}
	r := rand.New(rand.NewPCG(23, 24))
	const out, in = 64, 256
	raw := make([]byte, tensor.Q4_0.RowBytes(in)*out)
	if err := tensor.Quantize(tensor.Q4_0, raw, randoms(r, out*in)); err != nil {
		t.Fatal(err)
	}
	w := devBuf(t, d, tensor.Q4_0, out, in, nil)
	if err := d.Upload(w, raw); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n     int
		ahead bool
	}{{aheadMinRows - 1, false}, {aheadMinRows, true}} {
		x, y := devBuf(t, d, tensor.F32, tc.n, in, nil), devBuf(t, d, tensor.F32, tc.n, out, nil)
		if err := d.Upload(x, tensor.Float32Bytes(randoms(r, tc.n*in))); err != nil {
			t.Fatal(err)
		}
		d.MatMul(y, w, x)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		if got := d.ahead != nil; got != tc.ahead {
			t.Fatalf("after a MatMul of %d rows: side stream started %v, want %v", tc.n, got, tc.ahead)
		}
	}
}

// Package backendtest is the conformance suite every backend.Device runs, in the manner
// of gonum's blas/testblas: Run checks each Kernels method against a float64 reference
// computed on the host from random data.
//
// Tolerances are those a correct device can meet whatever its summation order; the CPU
// device's bit-level agreement with llama.cpp is tested in its own package.
package backendtest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Run checks every kernel of the devices newDevice returns. newDevice is called once
// per subtest; it may skip t (no GPU) and should register the device's Close with
// t.Cleanup.
func Run(t *testing.T, newDevice func(t *testing.T) backend.Device) {
	tests := []struct {
		name string
		fn   func(*testing.T, backend.Device)
	}{
		{"Buffers", testBuffers},
		{"Embed", testEmbed},
		{"RMSNorm", testRMSNorm},
		{"MatMul", testMatMul},
		{"RoPE", testRoPE},
		{"SetRows", testSetRows},
		{"Attention", testAttention},
		{"SwiGLU", testSwiGLU},
		{"Add", testAdd},
		{"Copy", testCopy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDevice(t)
			tt.fn(t, d)
			if err := d.Sync(); err != nil {
				t.Fatalf("Sync: %v", err)
			}
		})
	}
}

// rng returns a deterministic generator for one test.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// normals returns n values of scale·N(0,1).
func normals(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// upload allocates a rows × cols buffer of dt on d and fills it with data.
func upload(t *testing.T, d backend.Device, dt tensor.DType, rows, cols int, data []byte) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(dt, rows, cols)
	if err != nil {
		t.Fatalf("Alloc(%v, %d, %d): %v", dt, rows, cols, err)
	}
	t.Cleanup(func() { d.Free(b) })
	if data != nil {
		if err := d.Upload(b, data); err != nil {
			t.Fatalf("Upload(%v, %d, %d): %v", dt, rows, cols, err)
		}
	}
	return b
}

// f32Buf uploads v as an F32 buffer of rows × len(v)/rows.
func f32Buf(t *testing.T, d backend.Device, rows int, v []float32) backend.Buffer {
	t.Helper()
	return upload(t, d, tensor.F32, rows, len(v)/rows, tensor.Float32Bytes(v))
}

// i32Buf uploads v as an I32 buffer of len(v) rows and one column.
func i32Buf(t *testing.T, d backend.Device, v []int32) backend.Buffer {
	t.Helper()
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := uint32(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return upload(t, d, tensor.I32, len(v), 1, b)
}

// download returns the bytes of b.
func download(t *testing.T, d backend.Device, b backend.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Rows()*b.DType().RowBytes(b.Cols()))
	if err := d.Download(out, b); err != nil {
		t.Fatalf("Download: %v", err)
	}
	return out
}

// downloadF32 returns the contents of an F32 buffer.
func downloadF32(t *testing.T, d backend.Device, b backend.Buffer) []float32 {
	t.Helper()
	return append([]float32(nil), tensor.Float32s(download(t, d, b))...)
}

// quantized returns v encoded as dt.
func quantized(t *testing.T, dt tensor.DType, v []float32) []byte {
	t.Helper()
	b := make([]byte, dt.RowBytes(len(v)))
	if err := tensor.Quantize(dt, b, v); err != nil {
		t.Fatalf("quantize %v: %v", dt, err)
	}
	return b
}

// dequantized returns b decoded from dt.
func dequantized(t *testing.T, dt tensor.DType, b []byte, n int) []float32 {
	t.Helper()
	v := make([]float32, n)
	if err := tensor.Dequantize(dt, v, b); err != nil {
		t.Fatalf("dequantize %v: %v", dt, err)
	}
	return v
}

// compare fails t at the first of got[i] whose distance from want[i] exceeds
// abs + rel·|want[i]|, and logs the largest error.
func compare(t *testing.T, what string, got []float32, want []float64, abs, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, 0
	for i := range want {
		e := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(float64(got[i])) {
			e = math.Inf(1)
		}
		if e > worst {
			worst, at = e, i
		}
		if e > abs+rel*math.Abs(want[i]) {
			t.Fatalf("%s: [%d] = %g, want %g (error %.3g > %.3g + %.3g·|want|)", what, i, got[i], want[i], e, abs, rel)
		}
	}
	t.Logf("%s: max abs error %.3g at [%d]", what, worst, at)
}

// widen converts float32s to float64s.
func widen(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return w
}

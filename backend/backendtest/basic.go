package backendtest

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// testBuffers checks Alloc (zeroed), Upload/Download round trips and Slice views.
func testBuffers(t *testing.T, d backend.Device) {
	b := upload(t, d, tensor.F32, 4, 6, nil)
	if b.Rows() != 4 || b.Cols() != 6 || b.DType() != tensor.F32 {
		t.Fatalf("Alloc(F32, 4, 6) = %v (%d, %d)", b.DType(), b.Rows(), b.Cols())
	}
	for i, x := range downloadF32(t, d, b) {
		if x != 0 {
			t.Fatalf("fresh buffer [%d] = %g, want 0", i, x)
		}
	}
	v := normals(rng(1), 24, 1)
	if err := d.Upload(b, tensor.Float32Bytes(v)); err != nil {
		t.Fatal(err)
	}
	s := b.Slice(1, 2)
	if s.Rows() != 2 || s.Cols() != 6 {
		t.Fatalf("Slice(1, 2) is (%d, %d)", s.Rows(), s.Cols())
	}
	if got, want := download(t, d, s), tensor.Float32Bytes(v[6:18]); !bytes.Equal(got, want) {
		t.Fatalf("Slice(1, 2) = %v, want %v", tensor.Float32s(got), v[6:18])
	}
	// Writing through a view changes the parent.
	d.Copy(s.Slice(1, 1), f32Buf(t, d, 1, []float32{9, 9, 9, 9, 9, 9}))
	if got := downloadF32(t, d, b); got[12] != 9 || got[17] != 9 || got[11] != v[11] || got[18] != v[18] {
		t.Fatalf("write through Slice: got %v", got)
	}
}

// testEmbed checks Embed against host dequantization for float and quantized table
// types.
func testEmbed(t *testing.T, d backend.Device) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q6_K} {
		t.Run(dt.String(), func(t *testing.T) {
			const vocab, dim = 7, 256
			r := rng(2)
			w := normals(r, vocab*dim, 1)
			q := quantized(t, dt, w)
			table := upload(t, d, dt, vocab, dim, q)
			ids := []int32{3, 0, 6, 3}
			dst := upload(t, d, tensor.F32, len(ids), dim, nil)
			d.Embed(dst, table, i32Buf(t, d, ids))
			deq := dequantized(t, dt, q, vocab*dim)
			var want []float64
			for _, id := range ids {
				want = append(want, widen(deq[int(id)*dim:(int(id)+1)*dim])...)
			}
			compare(t, "Embed", downloadF32(t, d, dst), want, 0, 1e-6)
		})
	}
}

// testRMSNorm checks RMSNorm against x/sqrt(mean(x²)+eps)·w in float64: over whole
// rows, and per group of the weight's length (a per-head norm, also in place), for decode
// and batch shapes.
func testRMSNorm(t *testing.T, d backend.Device) {
	const eps = 1e-5
	for _, tt := range []struct {
		n, dim, group int
		inPlace       bool
	}{
		{3, 96, 96, false}, {1, 4096, 4096, false}, {2, 40, 40, false}, {20, 96, 96, true},
		{3, 96, 32, true}, {1, 512, 128, true}, {20, 64, 8, false}, {5, 120, 40, false},
	} {
		t.Run(fmt.Sprintf("n=%d/dim=%d/group=%d/inplace=%v", tt.n, tt.dim, tt.group, tt.inPlace), func(t *testing.T) {
			r := rng(uint64(3 + tt.dim + tt.group))
			x, w := normals(r, tt.n*tt.dim, 2), normals(r, tt.group, 1)
			src := f32Buf(t, d, tt.n, x)
			dst := src
			if !tt.inPlace {
				dst = upload(t, d, tensor.F32, tt.n, tt.dim, nil)
			}
			d.RMSNorm(dst, src, f32Buf(t, d, 1, w), eps)
			want := make([]float64, tt.n*tt.dim)
			for g := 0; g < len(want); g += tt.group {
				var ss float64
				for _, v := range x[g : g+tt.group] {
					ss += float64(v) * float64(v)
				}
				s := 1 / math.Sqrt(ss/float64(tt.group)+eps)
				for j := 0; j < tt.group; j++ {
					want[g+j] = float64(x[g+j]) * s * float64(w[j])
				}
			}
			compare(t, "RMSNorm", downloadF32(t, d, dst), want, 1e-6, 1e-5)
		})
	}
}

// testSwiGLU checks SwiGLU against silu(g)·u in float64.
func testSwiGLU(t *testing.T, d backend.Device) {
	const n, dim = 3, 50
	r := rng(4)
	g, u := normals(r, n*dim, 4), normals(r, n*dim, 1)
	g[0], g[1] = -100, 100 // exp overflow and underflow must not give NaN
	dst := upload(t, d, tensor.F32, n, dim, nil)
	d.SwiGLU(dst, f32Buf(t, d, n, g), f32Buf(t, d, n, u))
	want := make([]float64, n*dim)
	for i := range want {
		x := float64(g[i])
		want[i] = x / (1 + math.Exp(-x)) * float64(u[i])
	}
	compare(t, "SwiGLU", downloadF32(t, d, dst), want, 1e-6, 1e-5)
}

// testAdd checks Add, dst += x, with x of dst's shape or one row added to every row
// (a bias), also right after a one-row MatMul whose output is that row (a device that
// fuses a mat-vec with a following Add must not take the broadcast for its epilogue).
func testAdd(t *testing.T, d backend.Device) {
	for _, tt := range []struct{ n, xRows, dim int }{{2, 2, 33}, {1, 1, 64}, {4, 1, 33}, {70, 1, 96}} {
		t.Run(fmt.Sprintf("n=%d/x=%d", tt.n, tt.xRows), func(t *testing.T) {
			r := rng(uint64(5 + tt.n))
			a, b := normals(r, tt.n*tt.dim, 1), normals(r, tt.xRows*tt.dim, 1)
			dst := f32Buf(t, d, tt.n, a)
			d.Add(dst, f32Buf(t, d, tt.xRows, b))
			want := make([]float64, tt.n*tt.dim)
			for i := range want {
				want[i] = float64(a[i] + b[i%len(b)])
			}
			compare(t, "Add", downloadF32(t, d, dst), want, 0, 0)
		})
	}
	t.Run("bias after MatMul", func(t *testing.T) {
		const in, out, n = 64, 32, 3
		r := rng(55)
		w, x, a := normals(r, out*in, 1), normals(r, in, 1), normals(r, n*out, 1)
		y := upload(t, d, tensor.F32, 1, out, nil)
		d.MatMul(y, f32Buf(t, d, out, w), f32Buf(t, d, 1, x))
		dst := f32Buf(t, d, n, a)
		d.Add(dst, y)
		want := make([]float64, n*out)
		for o := 0; o < out; o++ {
			var p float64
			for k := 0; k < in; k++ {
				p += float64(w[o*in+k]) * float64(x[k])
			}
			for i := 0; i < n; i++ {
				want[i*out+o] = float64(a[i*out+o]) + p
			}
		}
		compare(t, "Add", downloadF32(t, d, dst), want, 1e-5, 1e-5)
	})
}

// testCopy checks Copy F32→F32, F32→F16 (round to nearest even) and F16→F32 (exact).
func testCopy(t *testing.T, d backend.Device) {
	const n, dim = 3, 40
	v := normals(rng(6), n*dim, 3)
	src := f32Buf(t, d, n, v)
	same := upload(t, d, tensor.F32, n, dim, nil)
	d.Copy(same, src)
	compare(t, "Copy F32", downloadF32(t, d, same), widen(v), 0, 0)

	half := upload(t, d, tensor.F16, n, dim, nil)
	d.Copy(half, src)
	if got, want := download(t, d, half), quantized(t, tensor.F16, v); !bytes.Equal(got, want) {
		t.Fatalf("Copy F32→F16 differs from round-to-nearest-even")
	}
	back := upload(t, d, tensor.F32, n, dim, nil)
	d.Copy(back, half)
	compare(t, "Copy F16→F32", downloadF32(t, d, back), widen(dequantized(t, tensor.F16, quantized(t, tensor.F16, v), n*dim)), 0, 0)
}

// testSetRows checks SetRows into F32 and F16 caches: listed rows are replaced, the
// others untouched; rows of a multiple of 4 elements and not, shorter and longer than
// one block of a GPU kernel.
func testSetRows(t *testing.T, d backend.Device) {
	for _, tc := range []struct {
		dt  tensor.DType
		dim int
	}{{tensor.F32, 24}, {tensor.F16, 24}, {tensor.F32, 22}, {tensor.F16, 22}, {tensor.F16, 2056}, {tensor.F16, 1030}, {tensor.F32, 1030}} {
		dt, dim := tc.dt, tc.dim
		t.Run(fmt.Sprintf("%v/%d", dt, dim), func(t *testing.T) {
			const ctx = 8
			r := rng(7)
			init, src := normals(r, ctx*dim, 1), normals(r, 3*dim, 1)
			cache := upload(t, d, dt, ctx, dim, quantized(t, dt, init))
			rows := []int32{5, 0, 6}
			d.SetRows(cache, f32Buf(t, d, 3, src), i32Buf(t, d, rows))
			want := append([]float32(nil), init...)
			for i, row := range rows {
				copy(want[int(row)*dim:], src[i*dim:(i+1)*dim])
			}
			if got := download(t, d, cache); !bytes.Equal(got, quantized(t, dt, want)) {
				t.Fatalf("SetRows into %v: cache differs from the expected rows", dt)
			}
		})
	}
}

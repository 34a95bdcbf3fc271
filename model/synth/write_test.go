package synth

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// writeAndOpen writes plan p to a temp file and opens it.
func writeAndOpen(t *testing.T, p *Plan, opts Options) (*gguf.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), p.Shape.Name+"-"+p.FileType.Name+".gguf")
	if err := Write(path, p, opts); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

// testWriteTiny writes the tiny shape in every type, reads it back, runs Check, and
// checks that each weight tensor dequantizes to finite values spread like Sigma and
// that norm weights are near 1.
func testWriteTiny(t *testing.T) {
	tiny, _ := LookupShape("tiny")
	for _, ft := range FileTypes() {
		t.Run(ft.Name, func(t *testing.T) {
			p, err := NewPlan(tiny, ft)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := writeAndOpen(t, p, Options{Seed: 1, Threads: 2})
			if err := Check(f); err != nil {
				t.Fatal(err)
			}
			if len(f.Tensors) != len(p.Tensors) {
				t.Fatalf("%d tensors, planned %d", len(f.Tensors), len(p.Tensors))
			}
			for i, ti := range f.Tensors {
				checkValues(t, f, ti, p.Tensors[i])
			}
			if id, _ := f.Uint("general.file_type"); id != uint64(ft.ID) {
				t.Errorf("general.file_type %d, want %d", id, ft.ID)
			}
		})
	}
}

// TestWriteArch writes the tiny shape with the qwen2 block and the tiny-qwen3 shape
// (head size 128 of n_embd 256 over 4 heads), Q8_0, and checks them against llama.cpp's
// rules for their architectures, the biases and per-head norms included.
func TestWriteArch(t *testing.T) {
	tiny, _ := LookupShape("tiny")
	qwen2, err := tiny.WithArch("qwen2")
	if err != nil {
		t.Fatal(err)
	}
	qwen3, _ := LookupShape("tiny-qwen3")
	ft, _ := LookupFileType("Q8_0")
	for _, tc := range []struct {
		s     Shape
		extra string
		dims  string
	}{{qwen2, "blk.1.attn_k.bias", "[128]"}, {qwen3, "blk.1.attn_q_norm.weight", "[128]"}} {
		t.Run(tc.s.Arch, func(t *testing.T) {
			p, err := NewPlan(tc.s, ft)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := writeAndOpen(t, p, Options{Seed: 2, Threads: 2})
			if err := Check(f); err != nil {
				t.Fatal(err)
			}
			if f.Arch() != tc.s.Arch || len(f.Tensors) != len(p.Tensors) {
				t.Fatalf("architecture %q, %d tensors; want %s, %d", f.Arch(), len(f.Tensors), tc.s.Arch, len(p.Tensors))
			}
			for i, ti := range f.Tensors {
				checkValues(t, f, ti, p.Tensors[i])
			}
			if ti, ok := f.Tensor(tc.extra); !ok || fmt.Sprint(ti.Dims) != tc.dims || ti.Type != tensor.F32 {
				t.Errorf("%s: %+v, want F32 %s", tc.extra, ti, tc.dims)
			}
		})
	}
	if _, err := tiny.WithArch("gemma"); err == nil {
		t.Error("WithArch(gemma): no error")
	}
}

// checkValues dequantizes a tensor and checks its spread (weights) or range (norms).
func checkValues(t *testing.T, f *gguf.File, ti gguf.TensorInfo, spec TensorSpec) {
	t.Helper()
	if ti.Name != spec.Name || ti.Type != spec.Type || ti.Bytes() != uint64(spec.Bytes()) {
		t.Fatalf("tensor %s %v %d bytes; planned %s %v %d", ti.Name, ti.Type, ti.Bytes(), spec.Name, spec.Type, spec.Bytes())
	}
	if f.Alignment != gguf.DefaultAlignment || ti.Offset%uint64(f.Alignment) != 0 {
		t.Errorf("tensor %s at offset %d, alignment %d", ti.Name, ti.Offset, f.Alignment)
	}
	x := make([]float32, ti.Elements())
	if err := tensor.Dequantize(ti.Type, x, f.TensorData(ti)); err != nil {
		t.Fatalf("%s: %v", ti.Name, err)
	}
	var sum, sq float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s: non-finite value %v", ti.Name, v)
		}
		sum += float64(v)
		sq += float64(v) * float64(v)
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	n := float64(len(x))
	mean, sd := sum/n, math.Sqrt(sq/n-sum*sum/n/n)
	if spec.Norm {
		if lo < 0.9 || hi > 1.1 {
			t.Errorf("%s: norm weights in [%g, %g], want near 1", ti.Name, lo, hi)
		}
		return
	}
	if spec.Bias {
		if lo < -0.1 || hi > 0.1 || sd < 0.01 {
			t.Errorf("%s: biases in [%g, %g] (sd %.3g), want uniform in [-0.1, 0.1)", ti.Name, lo, hi, sd)
		}
		return
	}
	if math.Abs(mean) > 0.2*Sigma || sd < 0.7*Sigma || sd > 1.3*Sigma {
		t.Errorf("%s %v: mean %.4g sd %.4g, want about 0 and %g", ti.Name, ti.Type, mean, sd, Sigma)
	}
}

// TestWriteDeterministic checks that the bytes depend on the seed but not on the
// number of threads.
func TestWriteDeterministic(t *testing.T) {
	tiny, _ := LookupShape("tiny")
	ft, _ := LookupFileType("Q4_K_M")
	p, _ := NewPlan(tiny, ft)
	sum := func(seed uint64, threads int) string {
		_, path := writeAndOpen(t, p, Options{Seed: seed, Threads: threads})
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	a, b, c := sum(7, 1), sum(7, 3), sum(8, 2)
	if a != b {
		t.Errorf("seed 7: 1 thread %s, 3 threads %s", a[:12], b[:12])
	}
	if a == c {
		t.Errorf("seeds 7 and 8 give the same file")
	}
}

// testWrite7BOneLayer writes LLaMA-2-7B cut to one block (Q2_K, the smallest type:
// about 150 MB) and checks the file against llama.cpp's rules with its real shapes.
func testWrite7BOneLayer(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 150 MB")
	}
	s, _ := LookupShape("7b")
	ft, _ := LookupFileType("Q2_K")
	p, err := NewPlan(s.WithLayers(1), ft)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := writeAndOpen(t, p, Options{Seed: 3})
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor("blk.0.ffn_down.weight")
	if !ok || fmt.Sprint(ti.Dims) != "[11008 4096]" || ti.Type != tensor.Q2_K {
		t.Errorf("blk.0.ffn_down.weight = %+v, want Q2_K [11008 4096]", ti)
	}
	checkValues(t, f, ti, p.Tensors[3+7])
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, io.ErrShortWrite
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteError checks that a failing destination stops the generators and reports
// the tensor being written.
func TestWriteError(t *testing.T) {
	tiny, _ := LookupShape("tiny")
	ft, _ := LookupFileType("F32")
	p, _ := NewPlan(tiny, ft)
	w, err := NewWriter(p, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(&failWriter{n: 3 << 20}); err == nil {
		t.Fatal("write to a failing writer succeeded")
	}
}

//go:build cgo

package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

func TestWeightCacheFits(t *testing.T) {
	const gib = 1 << 30
	total := uint64(100 * gib) // headroom 1 GiB + 5 GiB
	tests := []struct {
		size, used, limit int64
		free              uint64
		want              bool
	}{
		{gib, 0, 16 * gib, 50 * gib, true},
		{gib, 15 * gib, 16 * gib, 50 * gib, true},    // exactly at the limit
		{gib, 15*gib + 1, 16 * gib, 50 * gib, false}, // one byte over the limit
		{gib, 0, 16 * gib, 7 * gib, true},            // leaves exactly the headroom
		{gib, 0, 16 * gib, 7*gib - 1, false},         // one byte short of the headroom
		{gib, 0, 16 * gib, gib / 2, false},           // not even the copy fits
		{gib, 0, 0, 50 * gib, false},                 // no cache
		{0, 0, 16 * gib, 50 * gib, false},            // nothing to cache
		{1 << 62, 1 << 62, 1 << 62, 1 << 63, false},  // overflow
		{gib, 0, 1 << 62, uint64(6*gib) + gib, true}, // the limit far above the memory
		{gib, 0, 1 << 62, uint64(6*gib) + gib - 1, false},
	}
	for _, tt := range tests {
		if got := wcacheFits(tt.size, tt.used, tt.limit, tt.free, total); got != tt.want {
			t.Errorf("wcacheFits(size %d, used %d, limit %d, free %d, total %d) = %v, want %v",
				tt.size, tt.used, tt.limit, tt.free, total, got, tt.want)
		}
	}
	if h := wcacheHeadroom(140 << 30); h != 1<<30+7<<30 {
		t.Errorf("headroom of 140 GiB = %d, want 8 GiB", h)
	}
}

func TestWeightCacheTypes(t *testing.T) {
	loaded := map[string]bool{}
	for _, k := range kernelTable() {
		loaded[k.entry] = true
	}
	for _, dt := range weightTypes {
		elem, kernel, ok := widened(dt)
		if ok && !loaded[kernel] {
			t.Errorf("%v: widened by %s, not a kernel of kernelTable", dt, kernel)
		}
		switch {
		case dt == tensor.F32 || dt == tensor.F16:
			if ok {
				t.Errorf("%v: cached as %s, want used as it is", dt, kernel)
			}
		case dt == tensor.BF16:
			if !ok || elem != 4 || kernel != "copy_bf16_f32" {
				t.Errorf("%v: %d bytes by %s (%v), want F32 by copy_bf16_f32", dt, elem, kernel, ok)
			}
		default:
			if !ok || elem != 2 || kernel != "dequant_f16_"+typeName(dt) {
				t.Errorf("%v: %d bytes by %s (%v), want F16 by its dequant kernel", dt, elem, kernel, ok)
			}
		}
	}
}

// TestOpenWithNegativeCache checks that OpenWith refuses a negative weight cache before
// it looks for a driver: without a GPU, an error for the missing driver would pass.
func TestOpenWithNegativeCache(t *testing.T) {
	d, err := OpenWith(0, Options{WeightCacheBytes: -1})
	if err == nil {
		d.Close()
		t.Fatal("OpenWith a negative weight cache: no error")
	}
	if errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "weight cache of -1 bytes") {
		t.Fatalf("OpenWith a negative weight cache: %v, want the cache refused", err)
	}
}

// openCachedTest opens device 0 with a weight cache of limit bytes, or skips t.
func openCachedTest(t *testing.T, limit int64) *Device {
	t.Helper()
	d := openTestWith(t, 0, Options{WeightCacheBytes: limit})
	if !d.HasBLAS() {
		t.Skip("cuda: no cuBLAS: batched MatMuls do not use the weight cache")
	}
	return d
}

// TestWeightCacheMatMul checks that batched MatMuls through the weight cache give the
// same bytes as through scratch, for quantized and BF16 weights; that a copy is made
// once, dropped when its weight is freed, not made while a graph is captured, and not
// made over the limit.
func TestWeightCacheMatMul(t *testing.T) {
	plain := openTest(t)
	cached := openCachedTest(t, 1<<30)
	tiny := openCachedTest(t, 1024) // no copy fits
	r := rand.New(rand.NewPCG(3, 4))
	types := []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K, tensor.BF16}
	shapes := [][2]int{{33, 256}, {256, 512}}
	for _, dt := range types {
		for _, sh := range shapes {
			out, in := sh[0], sh[1]
			raw := make([]byte, dt.RowBytes(in)*out)
			if err := tensor.Quantize(dt, raw, randoms(r, out*in)); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			for _, n := range []int{gemmMinRows, 100} {
				name := fmt.Sprintf("%v_%dx%d_n%d", dt, out, in, n)
				xs := tensor.Float32Bytes(randoms(r, n*in))
				want, _ := matMulOn(t, plain, dt, out, in, n, raw, xs, 1)
				before := cached.WeightCache()
				got, during := matMulOn(t, cached, dt, out, in, n, raw, xs, 3)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: cached MatMul differs from the scratch path", name)
				}
				elem, _, _ := widened(dt)
				if during.Copies != before.Copies+1 || during.Bytes != before.Bytes+int64(out*in*elem) {
					t.Errorf("%s: cache %+v while the weight lived, want one more copy than %+v", name, during, before)
				}
				after := cached.WeightCache()
				if after.Copies != before.Copies || after.Bytes != before.Bytes {
					t.Errorf("%s: cache %+v after the weight was freed, want %+v", name, after, before)
				}
				if got, _ := matMulOn(t, tiny, dt, out, in, n, raw, xs, 2); !bytes.Equal(got, want) {
					t.Errorf("%s: MatMul over the cache's limit differs from the scratch path", name)
				}
			}
		}
	}
	if s := tiny.WeightCache(); s.Copies != 0 || s.Bytes != 0 {
		t.Errorf("cache of 1024 bytes holds %+v", s)
	}

	// No copy is made while a graph is being captured (simulated: gemm is not captured).
	w, x, y := weightBufs(t, cached, tensor.Q4_0, 64, 256, gemmMinRows)
	cached.do(func() error { cached.capturing = true; return nil })
	cached.MatMul(y, w, x)
	cached.do(func() error { cached.capturing = false; return nil })
	if err := cached.Sync(); err != nil {
		t.Fatal(err)
	}
	if s := cached.WeightCache(); s.Copies != 0 {
		t.Errorf("a copy made while capturing: %+v", s)
	}
	cached.MatMul(y, w, x)
	if s := cached.WeightCache(); s.Copies != 1 || s.Bytes != 64*256*2 {
		t.Errorf("after one MatMul: %+v, want one copy of %d bytes", s, 64*256*2)
	}
	cached.Free(w)
	if err := cached.Sync(); err != nil {
		t.Fatal(err)
	}
	if s := cached.WeightCache(); s.Copies != 0 || s.Bytes != 0 {
		t.Errorf("after Free: %+v, want none", s)
	}
}

// weightBufs allocates a (out, in) weight of dt, x (n, in) and y (n, out) on d, freed
// when t ends (a second Free is harmless).
func weightBufs(t *testing.T, d *Device, dt tensor.DType, out, in, n int) (w, x, y backend.Buffer) {
	t.Helper()
	return devBuf(t, d, dt, out, in, nil), devBuf(t, d, tensor.F32, n, in, nil), devBuf(t, d, tensor.F32, n, out, nil)
}

// matMulOn runs MatMul reps times on d with fresh buffers holding raw and xs, checks
// that every run gives the same bytes, frees the buffers and returns the result and the
// weight cache before the Free.
func matMulOn(t *testing.T, d *Device, dt tensor.DType, out, in, n int, raw, xs []byte, reps int) ([]byte, WeightCacheStats) {
	t.Helper()
	w, x, y := weightBufs(t, d, dt, out, in, n)
	if err := d.Upload(w, raw); err != nil {
		t.Fatal(err)
	}
	if err := d.Upload(x, xs); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := range reps {
		d.MatMul(y, w, x)
		got := make([]byte, 4*n*out)
		if err := d.Download(got, y); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("%v: MatMul %d differs from the first", dt, i+1)
		}
	}
	s := d.WeightCache()
	d.Free(w)
	d.Free(x)
	d.Free(y)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return first, s
}

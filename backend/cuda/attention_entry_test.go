//go:build cgo

package cuda

import (
	"fmt"
	"slices"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestAttentionEntries checks, without a GPU, that every kernel name decodeEntry and
// flashEntry give for a cache type and head dimension Attention accepts is the one the
// instantiation rule names and is listed in kernelTable (so Open resolved it).
func TestAttentionEntries(t *testing.T) {
	var listed []string
	for _, k := range kernelTable() {
		listed = append(listed, k.entry)
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
		for hd := 1; hd <= maxHeadDim; hd++ {
			want := "attention_" + typeName(dt)
			if dt == tensor.F16 && (hd == 64 || hd == 128 || hd == 256) || dt == tensor.F32 && (hd == 64 || hd == 128) {
				want = fmt.Sprintf("attention_%s_hd%d", typeName(dt), hd)
			}
			if got := decodeEntry(dt, hd); got != want || !slices.Contains(listed, got) {
				t.Errorf("decodeEntry(%v, %d) = %q, want %q listed in kernelTable", dt, hd, got, want)
			}
			got, ok := flashEntry(dt, splitMaxRows+1, hd)
			wantOK := dt == tensor.F16 && (hd == 64 || hd == 80 || hd == 96 || hd == 128)
			want = ""
			if wantOK {
				want = fmt.Sprintf("flash_attn_f16_hd%d", hd)
			}
			if got != want || ok != wantOK || ok && !slices.Contains(listed, got) {
				t.Errorf("flashEntry(%v, %d) = %q, %v, want %q, %v listed in kernelTable", dt, hd, got, ok, want, wantOK)
			}
			if _, ok := flashEntry(dt, splitMaxRows, hd); ok {
				t.Errorf("flashEntry(%v, %d rows, %d): a decode batch got the flash kernel", dt, splitMaxRows, hd)
			}
		}
	}
}

// BenchmarkDecodeEntry times the name lookup an eager decode Attention call makes.
func BenchmarkDecodeEntry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = decodeEntry(tensor.F16, 128)
	}
}

package gguf

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/infergo/infer/tensor"
)

// allValues has one value of every type, arrays of each element type, an empty array
// and arrays of arrays.
func allValues() []KV {
	return []KV{
		{"u8", Uint8(200)}, {"i8", Int8(-100)}, {"u16", Uint16(60000)}, {"i16", Int16(-30000)},
		{"u32", Uint32(4000000000)}, {"i32", Int32(-2000000000)}, {"f32", Float32(-1.5e-5)},
		{"bool.t", Bool(true)}, {"bool.f", Bool(false)}, {"str", Str("héllo\x00world")}, {"str.empty", Str("")},
		{"u64", Uint64(math.MaxUint64)}, {"i64", Int64(math.MinInt64)}, {"f64", Float64(math.Pi)},
		{"a.u8", Uint8Array([]uint8{0, 255})}, {"a.i8", Int8Array([]int8{-128, 127})},
		{"a.u16", Uint16Array([]uint16{1, 65535})}, {"a.i16", Int16Array([]int16{-32768, 7})},
		{"a.u32", Uint32Array([]uint32{1, 2, 3})}, {"a.i32", Int32Array([]int32{-1, 1, 3, 6})},
		{"a.f32", Float32Array([]float32{0.5, float32(math.Inf(-1))})}, {"a.bool", BoolArray([]bool{true, false, true})},
		{"a.str", Strings([]string{"<unk>", "", "▁the"})}, {"a.u64", Uint64Array([]uint64{math.MaxUint64})},
		{"a.i64", Int64Array([]int64{math.MinInt64, 0})}, {"a.f64", Float64Array([]float64{1e300, -0.0})},
		{"a.empty", Uint32Array([]uint32{})},
		{"a.nested", Array(ArrayType, []Value{
			Uint32Array([]uint32{1, 2}),
			Strings([]string{"x"}),
			Array(ArrayType, []Value{Float32Array([]float32{3}), Array(ArrayType, []Value{})}),
		})},
	}
}

type testTensor struct {
	name string
	dt   tensor.DType
	dims []uint64
}

var testTensors = []testTensor{
	{"token_embd.weight", tensor.F32, []uint64{8, 5}},
	{"blk.0.attn_q.weight", tensor.Q8_0, []uint64{64, 3}},
	{"blk.0.ffn_down.weight", tensor.Q4_K, []uint64{256, 2, 1}},
	{"output_norm.weight", tensor.F16, []uint64{3}},
	{"empty", tensor.F32, []uint64{0, 4}},
	{"scalar", tensor.I32, []uint64{}},
}

// fill returns n bytes of a pattern that depends on seed.
func fill(n uint64, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + seed*13 + 1)
	}
	return b
}

func buildTestFile(t *testing.T, align uint32) ([]byte, []KV) {
	t.Helper()
	w := NewWriter()
	kvs := allValues()
	if align != 0 {
		kvs = append([]KV{{"general.alignment", Uint32(align)}}, kvs...)
	}
	for _, kv := range kvs {
		w.Set(kv.Key, kv.Value)
	}
	for i, tt := range testTensors {
		n := TensorInfo{Dims: tt.dims, Type: tt.dt}.Bytes()
		if err := w.AddTensorBytes(tt.name, tt.dt, tt.dims, fill(n, i)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), kvs
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 32, 64} {
		data, kvs := buildTestFile(t, align)
		f, err := Parse(data)
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		if want := max(int(align), DefaultAlignment); f.Alignment != want || f.Version != 3 {
			t.Errorf("align %d: alignment %d version %d", align, f.Alignment, f.Version)
		}
		if !reflect.DeepEqual(f.KV, kvs) {
			t.Errorf("align %d: metadata differs:\n got %v\nwant %v", align, f.KV, kvs)
		}
		if f.DataOffset%int64(f.Alignment) != 0 || int64(len(data))%int64(f.Alignment) != 0 {
			t.Errorf("align %d: data offset %d, size %d not aligned", align, f.DataOffset, len(data))
		}
		checkRoundTripTensors(t, f)
	}
}

func checkRoundTripTensors(t *testing.T, f *File) {
	t.Helper()
	if len(f.Tensors) != len(testTensors) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(testTensors))
	}
	for i, tt := range testTensors {
		ti, ok := f.Tensor(tt.name)
		if !ok || ti.Type != tt.dt || !reflect.DeepEqual(ti.Dims, tt.dims) || ti.Offset%uint64(f.Alignment) != 0 {
			t.Errorf("tensor %q: got %+v (found %v)", tt.name, ti, ok)
			continue
		}
		if got := f.TensorData(ti); !bytes.Equal(got, fill(ti.Bytes(), i)) {
			t.Errorf("tensor %q: data differs", tt.name)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"duplicate tensor", func(w *Writer) error {
			w.AddTensorBytes("a", tensor.F32, []uint64{1}, make([]byte, 4))
			return w.AddTensorBytes("a", tensor.F32, []uint64{1}, make([]byte, 4))
		}, "duplicate"},
		{"wrong byte count", func(w *Writer) error {
			return w.AddTensorBytes("a", tensor.F32, []uint64{2}, make([]byte, 4))
		}, "needs 8"},
		{"row not a block multiple", func(w *Writer) error {
			return w.AddTensorBytes("a", tensor.Q8_0, []uint64{33}, nil)
		}, "not a multiple"},
		{"rank 5", func(w *Writer) error {
			return w.AddTensorBytes("a", tensor.F32, []uint64{1, 1, 1, 1, 1}, make([]byte, 4))
		}, "rank 5"},
		{"short data function", func(w *Writer) error {
			w.AddTensor("a", tensor.F32, []uint64{4}, func(out io.Writer) error { _, err := out.Write(make([]byte, 12)); return err })
			_, err := w.WriteTo(io.Discard)
			return err
		}, "wrote 12 bytes, want 16"},
		{"bad alignment", func(w *Writer) error {
			w.Set("general.alignment", Uint32(48))
			_, err := w.WriteTo(io.Discard)
			return err
		}, "power-of-two"},
		{"alignment type", func(w *Writer) error {
			w.Set("general.alignment", Uint64(64))
			_, err := w.WriteTo(io.Discard)
			return err
		}, "uint32"},
		{"empty key", func(w *Writer) error {
			w.Set("", Uint32(1))
			_, err := w.WriteTo(io.Discard)
			return err
		}, "empty key"},
	}
	for _, tt := range tests {
		err := tt.do(NewWriter())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestWriterSetReplacesAndDeletes(t *testing.T) {
	w := NewWriter()
	w.Set("a", Uint32(1))
	w.Set("b", Str("x"))
	w.Set("c", Bool(true))
	w.Set("a", Uint32(2))
	w.Delete("b")
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []KV{{"a", Uint32(2)}, {"c", Bool(true)}}
	if !reflect.DeepEqual(f.KV, want) {
		t.Errorf("got %v, want %v", f.KV, want)
	}
}

// TestVersion2 reads a version 2 file, which has the same layout as version 3.
func TestVersion2(t *testing.T) {
	data, kvs := buildTestFile(t, 0)
	data[4] = 2
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || !reflect.DeepEqual(f.KV, kvs) {
		t.Errorf("version %d, metadata equal %v", f.Version, reflect.DeepEqual(f.KV, kvs))
	}
	checkRoundTripTensors(t, f)
}

// TestTensorlessPadding checks how a file without tensors ends: padded to the alignment
// by default (llama.cpp's gguf_write_to_file, gguf-py's write_tensors_to_file), cut
// after the metadata with SetMetadataPadding(false) (gguf-py's --vocab-only write),
// and that MetadataPadded tells the two apart so a rewrite keeps the layout.
func TestTensorlessPadding(t *testing.T) {
	for _, align := range []uint32{0, 32, 64} {
		for _, padded := range []bool{true, false} {
			w := NewWriter()
			if align != 0 {
				w.Set("general.alignment", Uint32(align))
			}
			w.Set("tokenizer.ggml.model", Str("gpt2")) // 50 bytes of metadata so far, never aligned
			if !padded {
				w.SetMetadataPadding(false)
			}
			var buf bytes.Buffer
			if _, err := w.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			f, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("align %d padded %v: %v", align, padded, err)
			}
			a := int64(max(align, DefaultAlignment))
			end := f.DataOffset // the end of the metadata for a tensor-less file
			if end%a == 0 {
				t.Fatalf("align %d: metadata ends aligned at %d; the test needs an unaligned end", align, end)
			}
			want := end
			if padded {
				want = pad(end, a)
			}
			if int64(buf.Len()) != want || f.MetadataPadded() != padded {
				t.Errorf("align %d padded %v: %d bytes (metadata ends at %d), MetadataPadded %v; want %d bytes",
					align, padded, buf.Len(), end, f.MetadataPadded(), want)
			}
			if again := rewrite(t, f); !bytes.Equal(again, buf.Bytes()) {
				t.Errorf("align %d padded %v: rewrite gives %d bytes, want %d", align, padded, len(again), buf.Len())
			}
		}
	}
}

package gguf

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parseKVs(t *testing.T, kvs ...KV) *File {
	t.Helper()
	w := NewWriter()
	for _, kv := range kvs {
		w.Set(kv.Key, kv.Value)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGetters(t *testing.T) {
	f := parseKVs(t, allValues()...)
	tests := []struct {
		name    string
		get     func() (any, error)
		want    any
		wantErr string // substring of the error, "" for success
	}{
		{"uint from u8", func() (any, error) { return f.Uint("u8") }, uint64(200), ""},
		{"uint from u64", func() (any, error) { return f.Uint("u64") }, uint64(1<<64 - 1), ""},
		{"uint negative", func() (any, error) { return f.Uint("i8") }, uint64(0), `key "i8": value -100 is negative`},
		{"uint from string", func() (any, error) { return f.Uint("str") }, uint64(0), `key "str": type string, want an unsigned integer`},
		{"int from i64", func() (any, error) { return f.Int("i64") }, int64(-1 << 63), ""},
		{"int from u32", func() (any, error) { return f.Int("u32") }, int64(4000000000), ""},
		{"int overflow", func() (any, error) { return f.Int("u64") }, int64(0), "overflows int64"},
		{"float32", func() (any, error) { return f.Float("f32") }, float64(float32(-1.5e-5)), ""},
		{"float from int", func() (any, error) { return f.Float("i32") }, float64(0), `type int32, want float32 or float64`},
		{"bool", func() (any, error) { return f.Bool("bool.t") }, true, ""},
		{"string", func() (any, error) { return f.String("str") }, "héllo\x00world", ""},
		{"missing", func() (any, error) { return f.String("nope") }, "", `key "nope": not found`},
		{"strings", func() (any, error) { return f.Strings("a.str") }, []string{"<unk>", "", "▁the"}, ""},
		{"strings wrong", func() (any, error) { return f.Strings("a.i32") }, []string(nil), "type array of int32, want array of string"},
		{"float32s", func() (any, error) { return f.Float32s("a.f32") }, f.KV[20].Value.arr, ""},
		{"int32s", func() (any, error) { return f.Int32s("a.i32") }, []int32{-1, 1, 3, 6}, ""},
		{"int32s wrong", func() (any, error) { return f.Int32s("u32") }, []int32(nil), "type uint32, want array of int32"},
	}
	for _, tt := range tests {
		got, err := tt.get()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		case !reflect.DeepEqual(got, tt.want):
			t.Errorf("%s: got %#v, want %#v", tt.name, got, tt.want)
		}
	}
	if _, err := f.Bool("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v does not match ErrNotFound", err)
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{Uint32(7), "7"},
		{Int8(-3), "-3"},
		{Float32(0.1), "0.1"},
		{Float64(1e-5), "1e-05"},
		{Bool(true), "true"},
		{Str("a\"b"), `"a\"b"`},
		{Int32Array([]int32{1, 2, 3, 4}), "[1, 2, 3, 4]"},
		{Strings([]string{"<unk>", "<s>", "</s>", "a", "b"}), `[5 strings: "<unk>", "<s>", "</s>", ... ]`},
		{Array(ArrayType, []Value{Uint8Array([]uint8{1}), BoolArray(nil)}), "[[1], []]"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}

func TestArrayBuildsTypedSlices(t *testing.T) {
	if got, want := Array(Uint32Type, []Value{Uint32(1), Uint32(2)}), Uint32Array([]uint32{1, 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("Array(Uint32Type) = %#v, want %#v", got, want)
	}
	if got := Array(StringType, []Value{Str("a")}); got.Len() != 1 || got.ElemType() != StringType || got.Index(0) != Str("a") {
		t.Errorf("Array(StringType) = %#v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Array with a mismatched element did not panic")
		}
	}()
	Array(Uint32Type, []Value{Int32(1)})
}

// TestArrayOfScalars builds every scalar array type through Array and expects the value
// the typed constructor gives.
func TestArrayOfScalars(t *testing.T) {
	for _, kv := range allValues() {
		v := kv.Value
		if v.Type() != ArrayType || v.ElemType() == ArrayType {
			continue
		}
		elems := make([]Value, v.Len())
		for i := range elems {
			elems[i] = v.Index(i)
		}
		if got := Array(v.ElemType(), elems); !reflect.DeepEqual(got, v) {
			t.Errorf("%s: Array(%v) = %#v, want %#v", kv.Key, v.ElemType(), got, v)
		}
	}
}

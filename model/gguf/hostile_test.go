package gguf

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// raw builds GGUF bytes field by field, for malformed files the Writer cannot make.
type raw []byte

func (r raw) u32(x uint32) raw { return binary.LittleEndian.AppendUint32(r, x) }
func (r raw) u64(x uint64) raw { return binary.LittleEndian.AppendUint64(r, x) }
func (r raw) str(s string) raw { return append(r.u64(uint64(len(s))), s...) }

func header(version uint32, nTensors, nKV uint64) raw {
	return raw(Magic).u32(version).u64(nTensors).u64(nKV)
}

func (r raw) kvU32(key string, v uint32) raw { return r.str(key).u32(uint32(Uint32Type)).u32(v) }

func (r raw) tensor(name string, typ uint32, off uint64, dims ...uint64) raw {
	r = r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r = r.u64(d)
	}
	return r.u32(typ).u64(off)
}

// data pads to 32 and appends n bytes of tensor data.
func (r raw) data(n int) raw {
	r = append(r, make([]byte, pad(int64(len(r)), 32)-int64(len(r)))...)
	return append(r, make([]byte, n)...)
}

func TestHostileInput(t *testing.T) {
	const f32, q4_0 = 0, 2
	one := header(3, 1, 0).tensor("a", f32, 0, 4)
	tests := []struct {
		name  string
		data  []byte
		want  []string // substrings the error must contain
		check func(*FormatError) bool
	}{
		{"empty", nil, []string{"offset 0x0", "magic needs 4 bytes, 0 remain"}, nil},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), []string{`bad magic "GGML"`}, nil},
		{"version 1", header(1, 0, 0), []string{"offset 0x4", "unsupported version 1"}, nil},
		{"version 4", header(4, 0, 0), []string{"unsupported version 4"}, nil},
		{"big endian", raw(Magic).u32(0x03000000), []string{"big-endian"}, nil},
		{"truncated header", header(3, 0, 0)[:10], []string{"offset 0x8: truncated: tensor count needs 8 bytes, 2 remain"}, nil},
		{"huge tensor count", header(3, 1<<60, 0), []string{"offset 0x8", "tensor count 1152921504606846976 exceeds"}, nil},
		{"huge kv count", header(3, 0, 1<<62), []string{"offset 0x10", "metadata count"}, nil},
		{"huge key length", header(3, 0, 1).u64(1 << 40).u64(0), []string{"offset 0x18: kv 0: key length 1099511627776 exceeds what the 8 remaining"}, nil},
		{"huge string value", header(3, 0, 1).str("k").u32(uint32(StringType)).u64(1 << 50),
			[]string{`kv 0 "k"`, "string length"}, nil},
		{"huge array length", header(3, 0, 1).str("tokenizer.ggml.tokens").u32(uint32(ArrayType)).u32(uint32(StringType)).u64(1 << 61),
			[]string{`kv 0 "tokenizer.ggml.tokens"`, "array length 2305843009213693952 exceeds"}, nil},
		{"truncated string in array", header(3, 0, 1).str("k").u32(uint32(ArrayType)).u32(uint32(StringType)).u64(2).str("ab").u64(5).u32(0),
			[]string{`kv 0 "k": [1]`, "string length 5 exceeds"}, nil},
		{"unknown value type", header(3, 0, 1).str("k").u32(13), []string{`kv 0 "k"`, "unknown value type 13"}, nil},
		{"unknown element type", header(3, 0, 1).str("k").u32(uint32(ArrayType)).u32(99).u64(0), []string{"unknown array element type 99"}, nil},
		{"nesting", nested(header(3, 0, 1).str("k").u32(uint32(ArrayType)), 40), []string{"nested deeper than 16"}, nil},
		{"empty key", header(3, 0, 1).kvU32("", 1), []string{"kv 0", "empty key"}, nil},
		{"duplicate key", header(3, 0, 2).kvU32("a", 1).kvU32("a", 2), []string{"kv 1", `duplicate key "a" (also kv 0)`}, nil},
		{"alignment type", header(3, 0, 1).str("general.alignment").u32(uint32(Uint64Type)).u64(32),
			[]string{`offset 0x18: key "general.alignment": type uint64, want uint32`}, nil},
		{"alignment not power of two", header(3, 0, 1).kvU32("general.alignment", 24), []string{"24 is not a power of 2"}, nil},
		{"unknown tensor type", header(3, 1, 0).tensor("t", 99, 0, 4), []string{`tensor 0 "t"`, "unknown tensor type 99"}, nil},
		{"deprecated tensor type", header(3, 1, 0).tensor("t", 4, 0, 32), []string{"unknown tensor type 4"}, nil},
		{"rank 5", header(3, 1, 0).tensor("t", f32, 0, 1, 1, 1, 1, 1), []string{`tensor 0 "t"`, "rank 5 exceeds 4"}, nil},
		{"dims overflow", header(3, 1, 0).tensor("t", f32, 0, 1<<32, 1<<32), []string{"element count overflows"}, nil},
		{"dim above int64", header(3, 1, 0).tensor("t", f32, 0, 1<<63), []string{"dimension 0", "above the int64 range"}, nil},
		{"bytes overflow", header(3, 1, 0).tensor("t", f32, 0, 1<<31, 1<<31), []string{"size in bytes overflows"}, nil},
		{"row not block multiple", header(3, 1, 0).tensor("blk.0.attn_q.weight", q4_0, 0, 48, 2),
			[]string{`tensor 0 "blk.0.attn_q.weight"`, "row length 48 is not a multiple of the Q4_0 block size 32"}, nil},
		{"misaligned offset", header(3, 1, 0).tensor("t", f32, 4, 4).data(64), []string{"data offset 4 is not a multiple of the alignment 32"}, nil},
		{"duplicate tensor", header(3, 2, 0).tensor("t", f32, 0, 4).tensor("t", f32, 32, 4).data(64),
			[]string{`tensor 1 "t"`, "duplicate tensor name (also tensor 0)"}, nil},
		{"data past end", one.data(8), []string{`tensor 0 "a"`, "runs past end of file (size 72)", "data [64, 80)"},
			func(e *FormatError) bool { return e.Offset == int64(len(one))-8 }},
		{"offset past end", header(3, 1, 0).tensor("a", f32, 1<<40, 4).data(16), []string{"runs past end of file"}, nil},
		{"data section past end", one, []string{"data section", "past end of file"}, nil},
		{"overlap", header(3, 2, 0).tensor("a", f32, 0, 16).tensor("b", f32, 32, 8).data(64),
			[]string{`tensor 1 "b"`, `overlaps tensor 0 "a" at [+0, +64)`}, nil},
		{"truncated tensor info", header(3, 1, 0).str("t").u32(2).u64(4), []string{`tensor 0 "t"`, "dimension needs 8 bytes"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.data)
			if err == nil {
				t.Fatalf("parsed: %+v", f)
			}
			var fe *FormatError
			if !errors.Is(err, ErrFormat) || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "gguf: offset 0x") {
				t.Errorf("error %q is not a *FormatError with an offset", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.check != nil && fe != nil && !tt.check(fe) {
				t.Errorf("error %+v fails its check", fe)
			}
		})
	}
}

// nested appends depth levels of one-element arrays of arrays, then an empty uint8 array.
func nested(r raw, depth int) raw {
	for range depth {
		r = r.u32(uint32(ArrayType)).u64(1)
	}
	return r.u32(uint32(Uint8Type)).u64(0)
}

// TestTruncatedEverywhere cuts a valid file at every length: each prefix must fail
// cleanly (the full file parses).
func TestTruncatedEverywhere(t *testing.T) {
	data, _ := buildTestFile(t, 64)
	for n := range len(data) {
		if _, err := Parse(data[:n]); err == nil {
			// The file ends with padding of the last tensor; cutting padding is harmless only
			// if the data still fits, which the final tensor's padding allows.
			f, _ := Parse(data[:n])
			last := f.Tensors[len(f.Tensors)-1]
			if f.DataOffset+int64(last.Offset+last.Bytes()) > int64(n) {
				t.Fatalf("prefix %d parsed although its data does not fit", n)
			}
			continue
		} else if !errors.Is(err, ErrFormat) {
			t.Fatalf("prefix %d: %v is not ErrFormat", n, err)
		}
	}
}

// TestHostileAllocation parses small files that declare huge counts and lengths and
// checks the parser allocated little: lengths are bounded by the bytes remaining.
func TestHostileAllocation(t *testing.T) {
	inputs := [][]byte{
		header(3, 1<<40, 1<<40),
		header(3, 0, 1).str("k").u32(uint32(ArrayType)).u32(uint32(Uint64Type)).u64(1 << 40),
		header(3, 0, 1).str("k").u32(uint32(ArrayType)).u32(uint32(ArrayType)).u64(1 << 30),
		header(3, 1, 0).tensor("t", 0, 0, 1<<30, 1<<30),
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse(in)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("input %d parsed", i)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("input %d (%d bytes): parsing allocated %d bytes", i, len(in), n)
		}
	}
}

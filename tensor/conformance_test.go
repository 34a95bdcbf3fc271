package tensor_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// ggufTensor is one tensor of a GGUF file as the test-only reader below sees it.
type ggufTensor struct {
	Type tensor.DType
	Dims []uint64 // Dims[0] is the row length
	Data []byte
}

// Rows is the number of rows of length Dims[0].
func (g ggufTensor) Rows() int {
	r := 1
	for _, d := range g.Dims[1:] {
		r *= int(d)
	}
	return r
}

// readGGUFTensors reads the tensors of a GGUF v2/v3 file. It is a test-only reader, kept
// here so that the conformance tests do not depend on model/gguf.
func readGGUFTensors(t testing.TB, path string) map[string]ggufTensor {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := parseGGUF(buf)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ts
}

// ggufReader reads little-endian values, remembering the first error (reading past the
// end).
type ggufReader struct {
	b   []byte
	off int
	err error
}

func (r *ggufReader) next(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		if r.err == nil {
			r.err = fmt.Errorf("truncated at offset %d (need %d bytes)", r.off, n)
		}
		return make([]byte, 8)
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *ggufReader) u32() uint32    { return binary.LittleEndian.Uint32(r.next(4)) }
func (r *ggufReader) u64() uint64    { return binary.LittleEndian.Uint64(r.next(8)) }
func (r *ggufReader) str() string    { return string(r.next(r.u64())) }
func (r *ggufReader) skip(n uint64)  { r.next(n) }
func (r *ggufReader) failed() bool   { return r.err != nil }
func (r *ggufReader) fail(e error)   { r.err = e }
func (r *ggufReader) remaining() int { return len(r.b) - r.off }

// ggufScalarSize is the byte size of the GGUF metadata value types that have one.
var ggufScalarSize = map[uint32]uint64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

const (
	ggufString = 8
	ggufArray  = 9
)

// value skips one metadata value of type typ, returning it when it is a uint32.
func (r *ggufReader) value(typ uint32) (u32 uint32, isU32 bool) {
	switch typ {
	case ggufString:
		r.str()
	case ggufArray:
		et, n := r.u32(), r.u64()
		if sz, ok := ggufScalarSize[et]; ok {
			if n > uint64(r.remaining())/sz {
				r.fail(fmt.Errorf("array of %d elements overruns the file", n))
			}
			r.skip(n * sz)
			return 0, false
		}
		for i := uint64(0); i < n && !r.failed(); i++ {
			r.value(et)
		}
	default:
		sz, ok := ggufScalarSize[typ]
		if !ok {
			r.fail(fmt.Errorf("unknown metadata type %d", typ))
			return 0, false
		}
		if typ == 4 {
			return r.u32(), true
		}
		r.skip(sz)
	}
	return 0, false
}

func parseGGUF(buf []byte) (map[string]ggufTensor, error) {
	r := &ggufReader{b: buf}
	if !bytes.Equal(r.next(4), []byte("GGUF")) {
		return nil, fmt.Errorf("not a GGUF file")
	}
	if v := r.u32(); v < 2 || v > 3 {
		return nil, fmt.Errorf("GGUF version %d not supported", v)
	}
	nt, nkv := r.u64(), r.u64()
	align := uint64(32)
	for i := uint64(0); i < nkv && !r.failed(); i++ {
		key := r.str()
		if v, ok := r.value(r.u32()); ok && key == "general.alignment" {
			align = uint64(v)
		}
	}
	type info struct {
		name string
		ggufTensor
		off uint64
	}
	var infos []info
	for i := uint64(0); i < nt && !r.failed(); i++ {
		in := info{name: r.str()}
		nd := r.u32()
		for d := uint32(0); d < nd && !r.failed(); d++ {
			in.Dims = append(in.Dims, r.u64())
		}
		in.Type, in.off = tensor.DType(r.u32()), r.u64()
		infos = append(infos, in)
	}
	if r.err != nil {
		return nil, r.err
	}
	base := (uint64(r.off) + align - 1) / align * align
	out := make(map[string]ggufTensor, len(infos))
	for _, in := range infos {
		n := uint64(1)
		for _, d := range in.Dims {
			n *= d
		}
		if !in.Type.Known() || n%uint64(in.Type.BlockSize()) != 0 {
			return nil, fmt.Errorf("tensor %s: bad type %v or shape %v", in.name, in.Type, in.Dims)
		}
		start, size := base+in.off, uint64(in.Type.RowBytes(int(n)))
		if start > uint64(len(buf)) || size > uint64(len(buf))-start {
			return nil, fmt.Errorf("tensor %s: data [%d, +%d) outside the file", in.name, start, size)
		}
		in.Data = buf[start : start+size : start+size]
		out[in.name] = in.ggufTensor
	}
	return out, nil
}

// countBlockDiffs quantizes src to typ and counts the blocks that differ from want.
func countBlockDiffs(t *testing.T, typ tensor.DType, src []float32, want []byte) (diff, total int) {
	t.Helper()
	got := make([]byte, len(want))
	if err := tensor.Quantize(typ, got, src); err != nil {
		t.Fatal(err)
	}
	bb := typ.BlockBytes()
	for off := 0; off < len(want); off += bb {
		total++
		if !bytes.Equal(got[off:off+bb], want[off:off+bb]) {
			diff++
		}
	}
	return diff, total
}

// TestQuantizeMatchesLlamaCpp re-quantizes the F32 synth-256 weights and compares the
// bytes, block by block, with what llama-quantize --pure wrote.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	ref := readGGUFTensors(t, testdata.Path(t, "synth-256-F32.gguf"))
	for _, name := range []string{"F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"} {
		t.Run(name, func(t *testing.T) {
			typ, err := tensor.ParseDType(name)
			if err != nil {
				t.Fatal(err)
			}
			q := readGGUFTensors(t, testdata.Path(t, "synth-256-"+name+".gguf"))
			var diff, total, tensors int
			for tn, qt := range q {
				if qt.Type != typ {
					continue
				}
				src, ok := ref[tn]
				if !ok || src.Type != tensor.F32 {
					t.Fatalf("%s: no F32 source tensor", tn)
				}
				d, n := countBlockDiffs(t, typ, tensor.Float32s(src.Data), qt.Data)
				diff, total, tensors = diff+d, total+n, tensors+1
			}
			if tensors == 0 {
				t.Fatalf("no %v tensors in the file", typ)
			}
			t.Logf("%v: %d of %d blocks differ in %d tensors", typ, diff, total, tensors)
			if diff*10000 > total {
				t.Errorf("%v: %d of %d blocks differ from llama.cpp (limit 1 in 10,000)", typ, diff, total)
			}
		})
	}
}

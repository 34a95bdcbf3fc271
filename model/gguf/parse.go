package gguf

import (
	"fmt"
	"strconv"

	"github.com/infergo/infer/tensor"
)

// Parse parses a GGUF file held in data. The File keeps data and hands out slices of
// it from TensorData, so data must not change while the File is in use.
func Parse(data []byte) (*File, error) {
	r := &reader{data: data}
	f := &File{data: data, Alignment: DefaultAlignment}
	nTensors, nKV, err := r.header(f)
	if err != nil {
		return nil, err
	}
	if err := r.metadata(f, nKV); err != nil {
		return nil, err
	}
	infoAt, err := r.tensorInfos(f, nTensors)
	if err != nil {
		return nil, err
	}
	if err := f.checkData(r.off, infoAt); err != nil {
		return nil, err
	}
	return f, nil
}

// header reads the magic, version and the two counts.
func (r *reader) header(f *File) (nTensors, nKV int, err error) {
	magic, err := r.next(4, "magic")
	if err != nil {
		return 0, 0, err
	}
	if string(magic) != Magic {
		return 0, 0, r.errorf(0, "bad magic %q, want %q", magic, Magic)
	}
	if f.Version, err = r.uint32("version"); err != nil {
		return 0, 0, err
	}
	switch v := f.Version; {
	case v&0xffff == 0 && v != 0:
		return 0, 0, r.errorf(4, "version %#x: a big-endian file? only little-endian is supported", v)
	case v < 2 || v > 3:
		return 0, 0, r.errorf(4, "unsupported version %d (want 2 or 3)", v)
	}
	// A tensor info takes at least 24 bytes (name length, rank, type, offset), a KV 13.
	if nTensors, err = r.count("tensor count", 24); err != nil {
		return 0, 0, err
	}
	nKV, err = r.count("metadata count", 13)
	return nTensors, nKV, err
}

// metadata reads nKV key/value pairs and general.alignment.
func (r *reader) metadata(f *File, nKV int) error {
	f.KV = make([]KV, 0, nKV)
	f.keys = make(map[string]int, nKV)
	alignAt := int64(-1)
	for i := range nKV {
		at := r.off
		key, err := r.string("key")
		if err == nil && key == "" {
			err = r.errorf(at, "empty key")
		}
		if j, dup := f.keys[key]; err == nil && dup {
			err = r.errorf(at, "duplicate key %q (also kv %d)", key, j)
		}
		if err != nil {
			return inField(err, "kv "+strconv.Itoa(i))
		}
		v, err := r.kvValue()
		if err != nil {
			return inField(err, fmt.Sprintf("kv %d %q", i, key))
		}
		if key == "general.alignment" {
			alignAt = at
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if alignAt < 0 {
		return nil
	}
	return inField(f.alignment(alignAt), `key "general.alignment"`)
}

// kvValue reads a value type and the value.
func (r *reader) kvValue() (Value, error) {
	at := r.off
	t, err := r.uint32("value type")
	if err != nil {
		return Value{}, err
	}
	if !ValueType(t).Known() {
		return Value{}, r.errorf(at, "unknown value type %d", t)
	}
	return r.value(ValueType(t), 0)
}

// alignment sets f.Alignment from general.alignment (the KV at offset at), which must be
// a power-of-two uint32.
func (f *File) alignment(at int64) error {
	v, _ := f.Value("general.alignment")
	if v.Type() != Uint32Type {
		return &FormatError{Offset: at, Msg: "type " + v.Type().String() + ", want uint32"}
	}
	a, _ := v.AsUint()
	if a == 0 || a&(a-1) != 0 {
		return &FormatError{Offset: at, Msg: fmt.Sprintf("%d is not a power of 2", a)}
	}
	f.Alignment = int(a)
	return nil
}

// tensorInfos reads the tensor directory, returning where each info's offset field is.
func (r *reader) tensorInfos(f *File, n int) ([]int64, error) {
	f.Tensors = make([]TensorInfo, 0, n)
	f.tensors = make(map[string]int, n)
	infoAt := make([]int64, 0, n)
	for i := range n {
		ti, at, err := r.tensorInfo(f)
		if err != nil {
			return nil, inField(err, "tensor "+strconv.Itoa(i)+nameSuffix(ti.Name))
		}
		f.tensors[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
		infoAt = append(infoAt, at)
	}
	return infoAt, nil
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " " + strconv.Quote(name)
}

// tensorInfo reads one tensor's name, dims, type and offset; at is the offset field's position.
func (r *reader) tensorInfo(f *File) (ti TensorInfo, at int64, err error) {
	start := r.off
	if ti.Name, err = r.string("name"); err != nil {
		return TensorInfo{}, 0, err
	}
	if ti.Name == "" {
		return ti, 0, r.errorf(start, "empty name")
	}
	if j, dup := f.tensors[ti.Name]; dup {
		return ti, 0, r.errorf(start, "duplicate tensor name (also tensor %d)", j)
	}
	rankAt := r.off
	rank, err := r.uint32("rank")
	if err == nil && rank > MaxRank {
		err = r.errorf(rankAt, "rank %d exceeds %d", rank, MaxRank)
	}
	if err != nil {
		return ti, 0, err
	}
	ti.Dims = make([]uint64, rank)
	for j := range ti.Dims {
		if ti.Dims[j], err = r.uint64("dimension"); err != nil {
			return ti, 0, err
		}
	}
	t, err := r.uint32("type")
	if err != nil {
		return ti, 0, err
	}
	ti.Type = tensor.DType(t)
	if msg := checkShape(ti.Dims, ti.Type); msg != "" {
		return ti, 0, r.errorf(rankAt, "%s", msg)
	}
	at = r.off
	if ti.Offset, err = r.uint64("offset"); err != nil {
		return ti, 0, err
	}
	if ti.Offset%uint64(f.Alignment) != 0 {
		return ti, 0, r.errorf(at, "data offset %d is not a multiple of the alignment %d", ti.Offset, f.Alignment)
	}
	return ti, at, nil
}

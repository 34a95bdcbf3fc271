package gguf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/infergo/infer/tensor"
)

// A Writer builds a GGUF version 3 file: set the metadata and add tensors, then call
// WriteTo or WriteFile. Tensor data is pulled from the callers' functions while the
// file is written, so it need not all be in memory at once.
type Writer struct {
	kv      []KV
	keys    map[string]int
	tensors []pendingTensor
	names   map[string]int
	err     error // first error from Set, reported by WriteTo
	// metaOnly leaves a file without tensors unpadded (SetMetadataPadding(false)).
	metaOnly bool
}

type pendingTensor struct {
	info TensorInfo
	data func(io.Writer) error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]int{}}
}

// Set sets key to v. A new key goes after the existing ones; setting an existing key
// replaces its value in place. general.alignment, if set, must be a power-of-two
// uint32; WriteTo reports a bad one.
func (w *Writer) Set(key string, v Value) {
	if key == "" {
		w.err = cmpErr(w.err, errors.New("gguf: Set: empty key"))
		return
	}
	if i, ok := w.keys[key]; ok {
		w.kv[i].Value = v
		return
	}
	w.keys[key] = len(w.kv)
	w.kv = append(w.kv, KV{Key: key, Value: v})
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// Delete removes key, keeping the order of the others.
func (w *Writer) Delete(key string) {
	i, ok := w.keys[key]
	if !ok {
		return
	}
	w.kv = append(w.kv[:i], w.kv[i+1:]...)
	delete(w.keys, key)
	for j := i; j < len(w.kv); j++ {
		w.keys[w.kv[j].Key] = j
	}
}

// AddTensor adds a tensor whose data the function writes when the file is written; it
// must write exactly the tensor's size in bytes (type dt, shape dims in ggml order).
func (w *Writer) AddTensor(name string, dt tensor.DType, dims []uint64, data func(io.Writer) error) error {
	if name == "" || data == nil {
		return fmt.Errorf("gguf: AddTensor %q: empty name or nil data function", name)
	}
	if _, dup := w.names[name]; dup {
		return fmt.Errorf("gguf: AddTensor %q: duplicate name", name)
	}
	if msg := checkShape(dims, dt); msg != "" {
		return fmt.Errorf("gguf: AddTensor %q: %s", name, msg)
	}
	w.names[name] = len(w.tensors)
	ti := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: dt}
	w.tensors = append(w.tensors, pendingTensor{info: ti, data: data})
	return nil
}

// AddTensorBytes adds a tensor whose data is in memory; len(data) must be its size.
func (w *Writer) AddTensorBytes(name string, dt tensor.DType, dims []uint64, data []byte) error {
	ti := TensorInfo{Dims: dims, Type: dt}
	if checkShape(dims, dt) == "" && uint64(len(data)) != ti.Bytes() {
		return fmt.Errorf("gguf: AddTensorBytes %q: %d bytes of data, %v %v needs %d", name, len(data), dt, dimsString(dims), ti.Bytes())
	}
	return w.AddTensor(name, dt, dims, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
}

// SetMetadataPadding chooses how a file without tensors ends. With pad true (the
// default) the metadata is followed by zero padding to the alignment, where the data
// section would start, as llama.cpp's gguf_write_to_file and gguf-py's
// GGUFWriter.write_tensors_to_file write it (vocab/ggml-vocab-qwen2.gguf). With pad
// false the file stops after the last metadata byte, as gguf-py's header-and-metadata
// write of convert_hf_to_gguf.py --vocab-only leaves it (llama.cpp's
// models/ggml-vocab-*.gguf). File.MetadataPadded tells which way a file was written. A
// file with tensors is always padded.
func (w *Writer) SetMetadataPadding(pad bool) { w.metaOnly = !pad }

// alignment returns general.alignment, checked, or the default.
func (w *Writer) alignment() (int64, error) {
	i, ok := w.keys["general.alignment"]
	if !ok {
		return DefaultAlignment, nil
	}
	v := w.kv[i].Value
	a, _ := v.AsUint()
	if v.Type() != Uint32Type || a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("gguf: general.alignment %v (%v): want a power-of-two uint32", v, v.Type())
	}
	return int64(a), nil
}

// WriteTo writes the file to out: header, metadata, tensor infos, then the aligned data
// section, every tensor padded with zeros to the alignment. It returns the bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align, err := w.alignment()
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: out}
	e := &encoder{w: bufio.NewWriterSize(cw, 1<<20)}
	w.writeHeader(e, align)
	if err := w.writeData(e, align); err != nil {
		return cw.n, err
	}
	if err := e.w.Flush(); err != nil {
		return cw.n, fmt.Errorf("gguf: write: %w", err)
	}
	return cw.n, nil
}

// writeHeader writes everything before the data section, including its padding.
func (w *Writer) writeHeader(e *encoder, align int64) {
	e.Write([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	var off uint64
	for _, t := range w.tensors {
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.info.Type))
		e.u64(off)
		off += uint64(pad(int64(t.info.Bytes()), align))
	}
	if len(w.tensors) > 0 || !w.metaOnly {
		e.zeros(pad(e.n, align) - e.n)
	}
}

// writeData streams each tensor's data, checking its size, and pads it to align.
func (w *Writer) writeData(e *encoder, align int64) error {
	for i, t := range w.tensors {
		start := e.n
		if err := t.data(e); err != nil {
			return fmt.Errorf("gguf: tensor %d %q: data: %w", i, t.info.Name, err)
		}
		if got, want := e.n-start, int64(t.info.Bytes()); got != want {
			return fmt.Errorf("gguf: tensor %d %q: data function wrote %d bytes, want %d", i, t.info.Name, got, want)
		}
		e.zeros(pad(e.n, align) - e.n)
	}
	return nil
}

// Size returns the number of bytes WriteTo writes, without writing anything.
func (w *Writer) Size() (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align, err := w.alignment()
	if err != nil {
		return 0, err
	}
	e := &encoder{w: bufio.NewWriter(io.Discard)}
	w.writeHeader(e, align)
	n := e.n
	for _, t := range w.tensors {
		n += pad(int64(t.info.Bytes()), align)
	}
	return n, nil
}

// WriteFile writes the file to path through a temporary file in path's directory,
// renamed over path once complete, so a failed or interrupted write leaves no partial
// file, an existing file at path stays intact until the new one is whole, and path may
// be the file the tensors are read from. A directory that cannot be written fails
// before any tensor data is produced. A path that exists and is not a regular file (a
// device such as /dev/null, a pipe) is written in place; a directory is an error. The
// new file keeps the permissions of the one it replaces, else gets 0644.
func (w *Writer) WriteFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("gguf: write %s: is a directory", path)
	case err == nil && !st.Mode().IsRegular():
		return w.writeInPlace(path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("gguf: write %s: %w", path, err)
	}
	perm := fs.FileMode(0o644)
	if err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("gguf: write %s: cannot create a file in %s: %w", path, filepath.Dir(path), err)
	}
	_, err = w.WriteTo(tmp)
	for _, step := range []func() error{tmp.Sync, func() error { return tmp.Chmod(perm) }, tmp.Close} {
		if serr := step(); err == nil && serr != nil {
			err = fmt.Errorf("gguf: write %s: %w", path, serr)
		}
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), path); err != nil {
			err = fmt.Errorf("gguf: %w", err)
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// writeInPlace writes the file to path, which exists and is not a regular file.
func (w *Writer) writeInPlace(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	_, err = w.WriteTo(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gguf: %w", cerr)
	}
	return err
}

// countWriter counts the bytes that pass through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

package gguf

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestOpenErrors checks that Open's errors name the file and, for malformed input, the
// offset and the field.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("GGUF\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(dir, "missing.gguf"), "no such file"},
		{empty, "gguf: " + empty + " is empty (0 bytes), not a GGUF file"},
		{bad, "bad.gguf: gguf: offset 0x4: unsupported version 1"},
		{dir, "gguf: " + dir + " is a directory, not a GGUF file"},
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil { // Open must not block on it
		tests = append(tests, struct{ path, want string }{fifo, "gguf: " + fifo + " is a pipe, not a GGUF file"})
	}
	if _, err := os.Stat(os.DevNull); err == nil {
		tests = append(tests, struct{ path, want string }{os.DevNull, "gguf: " + os.DevNull + " is a device, not a GGUF file"})
	}
	for _, tt := range tests {
		f, err := Open(tt.path)
		if f != nil || err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s) = %v, %v; want one line containing %q", tt.path, f, err, tt.want)
		}
	}
	if _, err := Open(empty); !errors.Is(err, ErrFormat) {
		t.Errorf("Open of an empty file: %v, want ErrFormat", err)
	}
}

// TestWriteFileAtomic checks WriteFile's promises: an unwritable path fails before any
// tensor data is produced, a failed write leaves the old file and no temporary file,
// a device is written in place, and Size is the size written.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	produced := false
	writer := func(fail bool) *Writer {
		w := NewWriter()
		w.Set("general.architecture", Str("llama"))
		err := w.AddTensor("t", tensor.F32, []uint64{4}, func(out io.Writer) error {
			produced = true
			if fail {
				out.Write(make([]byte, 7))
				return errors.New("generator failed")
			}
			_, err := out.Write(make([]byte, 16))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, path := range []string{filepath.Join(dir, "missing", "out.gguf"), dir} {
		produced = false
		if err := writer(false).WriteFile(path); err == nil || strings.Contains(err.Error(), "\n") || produced {
			t.Errorf("WriteFile(%s) = %v, data produced %v; want a one-line error before any data", path, err, produced)
		}
	}
	out := filepath.Join(dir, "out.gguf")
	if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writer(true).WriteFile(out); err == nil || !strings.Contains(err.Error(), "generator failed") {
		t.Fatalf("WriteFile with a failing tensor: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("a failed write changed the old file to %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d entries in the directory, want only out.gguf", len(entries))
	}
	w := writer(false)
	if err := w.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if n, serr := w.Size(); err != nil || serr != nil || st.Size() != n || st.Mode().Perm() != 0o600 {
		t.Errorf("written file: %v, %v; size %d, Size() %d, mode %v (want the old file's 0600)", err, serr, st.Size(), n, st.Mode().Perm())
	}
	if f, err := Open(out); err != nil || len(f.Tensors) != 1 {
		t.Errorf("rewritten file: %v", err)
	} else {
		f.Close()
	}
	if _, err := os.Stat(os.DevNull); err == nil {
		if err := writer(false).WriteFile(os.DevNull); err != nil {
			t.Errorf("WriteFile(%s): %v", os.DevNull, err)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v, %v", os.DevNull, st.Mode(), err)
		}
	}
}

// TestTensorSection reads every tensor of a written file through TensorSection and
// checks the bytes equal TensorData's; a File made by Parse, a tensor of another file
// and a closed File have none.
func TestTensorSection(t *testing.T) {
	w := NewWriter()
	w.Set("general.architecture", Str("llama"))
	for i, n := range []int{3, 64, 1} {
		data := make([]byte, 4*n)
		for j := range data {
			data[j] = byte(i*37 + j)
		}
		if err := w.AddTensor(string(rune('a'+i)), tensor.F32, []uint64{uint64(n)}, func(out io.Writer) error {
			_, err := out.Write(data)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "t.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range f.Tensors {
		sr, ok := f.TensorSection(ti)
		if !ok {
			t.Fatalf("tensor %s: no section", ti.Name)
		}
		got, err := io.ReadAll(sr)
		if want := f.TensorData(ti); err != nil || string(got) != string(want) {
			t.Errorf("tensor %s: section %x, %v; want %x", ti.Name, got, err, want)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := parsed.TensorSection(parsed.Tensors[0]); ok {
		t.Error("a File made by Parse returned a section")
	}
	foreign := f.Tensors[1]
	foreign.Offset = uint64(f.Size())
	if _, ok := f.TensorSection(foreign); ok {
		t.Error("a tensor past the end of the file returned a section")
	}
	ti := f.Tensors[0]
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.TensorSection(ti); ok {
		t.Error("a closed File returned a section")
	}
}

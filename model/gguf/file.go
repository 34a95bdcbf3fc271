package gguf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// File is a parsed GGUF file: its metadata, tensor directory and data section.
type File struct {
	Version    uint32
	Alignment  int          // general.alignment, default 32
	KV         []KV         // metadata in file order
	Tensors    []TensorInfo // in file order
	DataOffset int64        // start of the data section

	data    []byte         // the whole file: a read-only mapping (Open) or the caller's bytes
	mapped  bool           // data is a mapping to release in Close
	fd      *os.File       // the open file (Open), read by TensorSection
	keys    map[string]int // index into KV
	tensors map[string]int // index into Tensors
}

// A KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// Open maps the file at path read-only and parses it. Tensor data handed out by
// TensorData are slices of the mapping, valid until Close.
func Open(path string) (*File, error) {
	if st, err := os.Stat(path); err == nil { // before opening: opening a pipe blocks
		if err := checkFile(path, st); err != nil {
			return nil, err
		}
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := mapFile(path, fd)
	if err != nil {
		return nil, errors.Join(err, fd.Close())
	}
	f.fd = fd
	return f, nil
}

// mapFile maps fd, the file at path, and parses it.
func mapFile(path string, fd *os.File) (*File, error) {
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if err := checkFile(path, st); err != nil { // the file may have changed since
		return nil, err
	}
	size := st.Size()
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s: %d bytes do not fit in this process's address space", path, size)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		syscall.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.mapped = true
	return f, nil
}

// checkFile rejects, in one line, what Open cannot map as a GGUF file: a directory, a
// device or pipe (/dev/null), an empty file (an ErrFormat).
func checkFile(path string, st os.FileInfo) error {
	switch {
	case st.IsDir():
		return &notGGUF{fmt.Sprintf("gguf: %s is a directory, not a GGUF file", path), false}
	case !st.Mode().IsRegular():
		kind := "not a regular file"
		switch m := st.Mode(); {
		case m&os.ModeDevice != 0:
			kind = "a device"
		case m&os.ModeNamedPipe != 0:
			kind = "a pipe"
		case m&os.ModeSocket != 0:
			kind = "a socket"
		}
		return &notGGUF{fmt.Sprintf("gguf: %s is %s, not a GGUF file", path, kind), false}
	case st.Size() == 0:
		return &notGGUF{fmt.Sprintf("gguf: %s is empty (0 bytes), not a GGUF file", path), true}
	}
	return nil
}

// notGGUF is Open's error for a path that is not a GGUF file at all.
type notGGUF struct {
	msg    string
	format bool // a file, but not GGUF: matches ErrFormat
}

func (e *notGGUF) Error() string { return e.msg }

// Is reports whether target is ErrFormat, for an empty file.
func (e *notGGUF) Is(target error) bool { return e.format && target == ErrFormat }

// Close releases the mapping and the file opened by Open; tensor data must not be used
// afterwards. It does nothing for a File made by Parse.
func (f *File) Close() error {
	var errs []error
	if f.fd != nil {
		errs = append(errs, f.fd.Close())
		f.fd = nil
	}
	if f.mapped && f.data != nil {
		if err := syscall.Munmap(f.data); err != nil {
			errs = append(errs, fmt.Errorf("gguf: munmap: %w", err))
		}
		f.data, f.mapped = nil, false
	}
	return errors.Join(errs...)
}

// Size returns the size of the file in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// MetadataPadded reports whether the metadata and tensor infos are followed by zero
// padding to the alignment: always true for a file with tensors; for a file without
// (a vocabulary-only file), whether the writer padded it (see
// Writer.SetMetadataPadding). A copy keeps the layout when it passes this on.
func (f *File) MetadataPadded() bool {
	return len(f.Tensors) > 0 || int64(len(f.data)) >= pad(f.DataOffset, int64(f.Alignment))
}

// Value returns the value of key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Arch returns general.architecture, or "" when it is absent or not a string.
func (f *File) Arch() string {
	s, _ := f.String("general.architecture")
	return s
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorSection returns a reader of ti's data that reads the file itself rather than
// its mapping (a copy of a tensor into other memory, a GPU's staging buffers, then
// faults in no page of the mapping); ok is false for a File made by Parse, after Close,
// or when ti does not lie within the data section.
func (f *File) TensorSection(ti TensorInfo) (sr *io.SectionReader, ok bool) {
	if f.fd == nil || f.TensorData(ti) == nil {
		return nil, false
	}
	return io.NewSectionReader(f.fd, f.DataOffset+int64(ti.Offset), int64(ti.Bytes())), true
}

// TensorData returns the bytes of ti's data, a slice of the file without copying. It
// returns nil when ti does not lie within the file's data section (a TensorInfo from
// another file) or after Close.
func (f *File) TensorData(ti TensorInfo) []byte {
	start := uint64(f.DataOffset) + ti.Offset
	n := ti.Bytes()
	if ti.Offset > uint64(len(f.data)) || start > uint64(len(f.data)) || n > uint64(len(f.data))-start {
		return nil
	}
	return f.data[start : start+n : start+n]
}

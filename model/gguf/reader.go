package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// reader decodes little-endian fields from data, refusing to read past its end.
type reader struct {
	data []byte
	off  int64
}

func (r *reader) remaining() int64 { return int64(len(r.data)) - r.off }

// errorf reports a problem with the field starting at offset at.
func (r *reader) errorf(at int64, format string, args ...any) error {
	return &FormatError{Offset: at, Msg: fmt.Sprintf(format, args...)}
}

// next returns the next n bytes, or an error naming what was being read.
func (r *reader) next(n int64, what string) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, r.errorf(r.off, "truncated: %s needs %d bytes, %d remain", what, n, r.remaining())
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b, nil
}

func (r *reader) uint8(what string) (uint8, error) {
	b, err := r.next(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *reader) uint32(what string) (uint32, error) {
	b, err := r.next(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) uint64(what string) (uint64, error) {
	b, err := r.next(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// count reads a uint64 element count and refuses one that cannot fit in the remaining
// bytes at minSize bytes per element, so callers may allocate count elements.
func (r *reader) count(what string, minSize int64) (int, error) {
	at := r.off
	n, err := r.uint64(what)
	if err != nil {
		return 0, err
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > math.MaxInt64/uint64(minSize) || int64(n)*minSize > r.remaining() {
		return 0, r.errorf(at, "%s %d exceeds what the %d remaining bytes can hold", what, n, r.remaining())
	}
	return int(n), nil
}

// string reads a length-prefixed string, copying it out of data.
func (r *reader) string(what string) (string, error) {
	n, err := r.count(what+" length", 1)
	if err != nil {
		return "", err
	}
	b, err := r.next(int64(n), what)
	return string(b), err
}

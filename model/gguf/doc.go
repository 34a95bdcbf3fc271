// Package gguf reads and writes GGUF files, the container llama.cpp uses for models:
// a header, typed key/value metadata, a tensor directory and an aligned data section.
//
// Open maps a file read-only and hands out tensor data as slices of the mapping,
// without copying; Parse does the same over bytes already in memory. Both versions 2
// and 3 of the format are read. Every length in the file is checked against the bytes
// that remain before anything is allocated, so a hostile or truncated file yields an
// error naming the field and its byte offset (a *FormatError), never a panic or an
// allocation larger than the file.
//
// Writer produces version 3 files with the layout llama.cpp's gguf-py writes: header,
// metadata, tensor infos, zero padding to general.alignment (default 32), then each
// tensor's data padded to the alignment. Tensor data is streamed, so a file larger
// than memory can be written.
package gguf

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// MaxRank is the most dimensions a tensor may have (GGML_MAX_DIMS).
const MaxRank = 4

// maxNesting bounds arrays of arrays, so hostile input cannot recurse without limit.
const maxNesting = 16

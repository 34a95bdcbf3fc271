package model

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// The KL-divergence base file, as llama-perplexity --kl-divergence-base writes it
// (all little-endian):
//
//	"_logits_"                      8-byte magic
//	n_ctx, n_vocab, n_chunk         int32 each
//	tokens                          n_chunk·n_ctx int32: the text's tokens, BOS first
//	records                         per chunk, per scored position (n_ctx/2 ... n_ctx-2)
//
// A record holds the log-probabilities of the base model at one position, quantized
// to 16 bits: float32 scale, float32 min_log_prob, then n_vocab uint16 q with log p =
// scale·q + min_log_prob (q = 0 for the logits more than 16 below the largest), zero
// padding to an even count. Its length is 2·((n_vocab+1)/2)+4 uint16s.

// kldMagic opens a base file.
const kldMagic = "_logits_"

// KLDHeader is the beginning of a KL-divergence base file: the chunking and the tokens
// the base model was evaluated on.
type KLDHeader struct {
	Ctx    int     // tokens per chunk (n_ctx)
	Vocab  int     // the base model's vocabulary size
	Chunks int     // chunks in the file
	Tokens []int32 // Chunks·Ctx tokens, as the text tokenized (first tokens not replaced by BOS)
}

// recordBytes is the length in bytes of one position's record for a vocabulary of
// nVocab tokens.
func recordBytes(nVocab int) int { return 2 * (2*((nVocab+1)/2) + 4) }

// size is the length in bytes of the whole file the header describes.
func (h *KLDHeader) size() int64 {
	first := h.Ctx / 2
	return int64(len(kldMagic)+12+4*len(h.Tokens)) + int64(h.Chunks)*int64(h.Ctx-1-first)*int64(recordBytes(h.Vocab))
}

// write writes the header to w.
func (h *KLDHeader) write(w io.Writer) error {
	b := make([]byte, 0, len(kldMagic)+12+4*len(h.Tokens))
	b = append(b, kldMagic...)
	for _, v := range []int{h.Ctx, h.Vocab, h.Chunks} {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
	}
	for _, t := range h.Tokens {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	_, err := w.Write(b)
	return err
}

// readKLDHeader reads a base file's header from r, checking its magic and sizes.
func readKLDHeader(r io.Reader) (*KLDHeader, error) {
	var fixed [len(kldMagic) + 12]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, fmt.Errorf("header: %w", noEOF(err))
	}
	if string(fixed[:len(kldMagic)]) != kldMagic {
		return nil, errors.New("not a file of log-probabilities (no _logits_ magic)")
	}
	le := binary.LittleEndian
	h := &KLDHeader{Ctx: int(int32(le.Uint32(fixed[8:]))), Vocab: int(int32(le.Uint32(fixed[12:]))), Chunks: int(int32(le.Uint32(fixed[16:])))}
	if h.Ctx < 4 || h.Vocab < 1 || h.Chunks < 1 || int64(h.Ctx)*int64(h.Chunks) > 1<<31 {
		return nil, fmt.Errorf("header: n_ctx %d, n_vocab %d, n_chunk %d", h.Ctx, h.Vocab, h.Chunks)
	}
	raw := make([]byte, 4*h.Ctx*h.Chunks)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("tokens: %w", noEOF(err))
	}
	h.Tokens = make([]int32, h.Ctx*h.Chunks)
	for i := range h.Tokens {
		h.Tokens[i] = int32(le.Uint32(raw[4*i:]))
	}
	return h, nil
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF: a file that ends early is truncated.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadKLDHeader reads the header of the base file at path (and checks the file's
// length against it).
func ReadKLDHeader(path string) (*KLDHeader, error) {
	r, err := openKLDBase(path)
	if err != nil {
		return nil, fmt.Errorf("kl-divergence: %w", err)
	}
	r.Close()
	return r.h, nil
}

// kldReader reads a base file: its header, then the records chunk by chunk.
type kldReader struct {
	f *os.File
	r *bufio.Reader
	h *KLDHeader
}

// openKLDBase opens the base file at path and reads its header; the file must be as
// long as the header says.
func openKLDBase(path string) (*kldReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &kldReader{f: f, r: bufio.NewReaderSize(f, 1<<20)}
	if r.h, err = readKLDHeader(r.r); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if want := r.h.size(); st.Size() != want {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, want %d for %d chunks of %d tokens over a vocabulary of %d", path, st.Size(), want, r.h.Chunks, r.h.Ctx, r.h.Vocab)
	}
	return r, nil
}

// read fills dst with the next records.
func (r *kldReader) read(dst []byte) error {
	_, err := io.ReadFull(r.r, dst)
	return noEOF(err)
}

func (r *kldReader) Close() error { return r.f.Close() }

// kldWriter writes a base file into a temporary file beside its path, renamed to path
// only by commit, so that a failed or cancelled run leaves no partial file.
type kldWriter struct {
	f    *os.File
	w    *bufio.Writer
	path string
}

// createKLDBase starts a base file for path with header h.
func createKLDBase(path string, h *KLDHeader) (*kldWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	w := &kldWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), path: path}
	if err := h.write(w.w); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

// write appends records.
func (w *kldWriter) write(recs []byte) error {
	_, err := w.w.Write(recs)
	return err
}

// commit flushes the file and moves it to its path, readable by all as a file
// os.Create makes under the usual umask.
func (w *kldWriter) commit() error {
	err := w.w.Flush()
	if err == nil {
		err = w.f.Chmod(0o644)
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.f.Name())
	}
	return err
}

// abort removes the temporary file.
func (w *kldWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// expf is C's expf as llama-perplexity calls it: exp in float32 (here the float64
// result rounded, which is what a correctly rounded expf returns).
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// nearestInt is llama-perplexity's nearest_int: v rounded to the nearest integer, ties
// to even, by adding 1.5·2^23 in float32 (valid for |v| < 2^22).
func nearestInt(v float32) int32 {
	b := math.Float32bits(v + 12582912)
	return int32(b&0x007fffff) - 0x00400000
}

// quantizeLogProbs writes the record of one position with logits to rec
// (recordBytes(len(logits)) bytes) and returns the negative log-likelihood of tok, as
// llama-perplexity's log_softmax does when it writes a base file (in float32 where it
// computes in float).
func quantizeLogProbs(rec []byte, logits []float32, tok int32) float64 {
	maxL, minL := logits[0], logits[0]
	for _, l := range logits[1:] {
		maxL, minL = max(maxL, l), min(minL, l)
	}
	minL = max(minL, maxL-16)
	var sum float64
	for _, l := range logits {
		sum += float64(expf(l - maxL))
	}
	logSum := float32(math.Log(sum))
	minLogProb := minL - maxL - logSum
	scale := (maxL - minL) / 65535
	le := binary.LittleEndian
	le.PutUint32(rec, math.Float32bits(scale))
	le.PutUint32(rec[4:], math.Float32bits(minLogProb))
	q := rec[8:]
	clear(q)
	if scale != 0 {
		inv := 1 / scale
		for i, l := range logits {
			if l > minL {
				le.PutUint16(q[2*i:], uint16(nearestInt(float32(inv*(l-minL)))))
			}
		}
	}
	return float64(maxL + logSum - logits[tok])
}

// logProb returns the base log-probability of token i in a record.
func logProb(rec []byte, i int) float32 {
	le := binary.LittleEndian
	scale, minLogProb := math.Float32frombits(le.Uint32(rec)), math.Float32frombits(le.Uint32(rec[4:]))
	return float32(scale*float32(le.Uint16(rec[8+2*i:]))) + minLogProb
}

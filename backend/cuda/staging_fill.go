package cuda

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// fillMinBytes is the smallest payload fillPieces copies on several goroutines: below
// it, starting them costs more than the copy.
const fillMinBytes = 1 << 20

// roundSlots returns how many slots of slotBytes one staging round of an n-byte
// payload fills, out of a ring of ring slots: as many as the payload needs, at most half
// the ring (the other half is being copied out), at least one.
func roundSlots(n, slotBytes, ring int) int {
	need := (n + slotBytes - 1) / slotBytes
	return max(1, min(need, ring/2))
}

// payload is the source of an upload: bytes in memory, or a section of a file read
// with ReadAt (no memory mapping involved).
type payload interface {
	size() int
	// readAt fills p with the payload's bytes from off on; off+len(p) <= size().
	readAt(p []byte, off int) error
}

// memPayload is an upload from memory.
type memPayload []byte

func (m memPayload) size() int { return len(m) }

func (m memPayload) readAt(p []byte, off int) error {
	copy(p, m[off:])
	return nil
}

// readerPayload is an upload read from a file section.
type readerPayload struct{ r *io.SectionReader }

func (r readerPayload) size() int { return int(r.r.Size()) }

func (r readerPayload) readAt(p []byte, off int) error {
	if n, err := r.r.ReadAt(p, int64(off)); n < len(p) {
		return fmt.Errorf("read %d bytes at %d: %w", len(p), off, errors.Join(err, io.ErrUnexpectedEOF))
	}
	return nil
}

// fillPieces copies src's bytes from from on into pieces in order, each piece taking
// len(piece) bytes (the last what is left), and returns the bytes copied. Pieces are
// filled on their own goroutines when the payload is large enough.
func fillPieces(pieces [][]byte, src payload, from int) (int, error) {
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	total = min(total, src.size()-from)
	// The pieces the payload reaches, cut to what is left, and where each reads from.
	type part struct {
		p  []byte
		at int
	}
	parts := make([]part, 0, len(pieces))
	for off := 0; off < total && len(parts) < len(pieces); {
		p := pieces[len(parts)]
		p = p[:min(len(p), total-off)]
		parts = append(parts, part{p, from + off})
		off += len(p)
	}
	errs := make([]error, len(parts))
	fill := func(i int) { errs[i] = src.readAt(parts[i].p, parts[i].at) }
	if len(parts) < 2 || total < fillMinBytes {
		for i := range parts {
			fill(i)
		}
	} else {
		var wg sync.WaitGroup
		for i := 1; i < len(parts); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fill(i)
			}()
		}
		fill(0) // the caller takes the first piece
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return total, nil
}

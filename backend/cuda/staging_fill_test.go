package cuda

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestRoundSlots(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ n, slot, ring, want int }{
		{1, 4 * mib, 2, 1},
		{9 * mib, 4 * mib, 2, 1},    // two slots: plain double buffering
		{9 * mib, 4 * mib, 16, 3},   // what the payload needs
		{100 * mib, 4 * mib, 16, 8}, // half the ring
		{4 * mib, 4 * mib, 16, 1},
		{4*mib + 1, 4 * mib, 16, 2},
		{5, 4, 1, 1}, // a ring of one slot still makes progress
	} {
		if got := roundSlots(c.n, c.slot, c.ring); got != c.want {
			t.Errorf("roundSlots(%d, %d, %d) = %d, want %d", c.n, c.slot, c.ring, got, c.want)
		}
	}
}

// TestFillPieces copies payloads shorter, equal to and longer than the pieces, below and
// above the size copied on several goroutines, from memory and from a file section, at
// offsets into the payload, and checks every byte and the count.
func TestFillPieces(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ n, from, piece, pieces int }{
		{10, 0, 4, 3},
		{12, 0, 4, 3},
		{100, 0, 4, 3},
		{100, 97, 4, 3}, // the tail of a payload
		{3*mib + 5, 0, mib, 4},
		{4 * mib, 0, mib, 4},
		{9 * mib, 0, mib, 4},
		{9 * mib, 7*mib + 3, mib, 4},
		{mib/2 + 3, 0, mib, 4}, // one partial piece
		{2*mib + 1, 0, mib, 8}, // more pieces than bytes need: the rest stay empty
	} {
		src := make([]byte, c.n)
		for i := range src {
			src[i] = byte(i*131 + i>>9)
		}
		want := min(c.n-c.from, c.piece*c.pieces)
		for _, p := range []struct {
			name string
			src  payload
		}{
			{"memory", memPayload(src)},
			{"reader", readerPayload{io.NewSectionReader(bytes.NewReader(append([]byte("head"), src...)), 4, int64(c.n))}},
		} {
			pieces := make([][]byte, c.pieces)
			for i := range pieces {
				pieces[i] = make([]byte, c.piece)
			}
			got, err := fillPieces(pieces, p.src, c.from)
			if err != nil || got != want {
				t.Errorf("%s: n %d from %d into %d×%d: copied %d, %v; want %d", p.name, c.n, c.from, c.pieces, c.piece, got, err, want)
			}
			if all := bytes.Join(pieces, nil); !bytes.Equal(all[:want], src[c.from:c.from+want]) {
				t.Errorf("%s: n %d from %d into %d×%d: bytes differ", p.name, c.n, c.from, c.pieces, c.piece)
			}
		}
	}
}

// TestFillPiecesShortReader fails, rather than upload stale bytes, when the file
// section ends before its stated size (a file truncated under the loader).
func TestFillPiecesShortReader(t *testing.T) {
	const mib = 1 << 20
	for _, n := range []int{100, 3 * mib} {
		short := readerPayload{io.NewSectionReader(bytes.NewReader(make([]byte, n-1)), 0, int64(n))}
		pieces := [][]byte{make([]byte, mib), make([]byte, mib), make([]byte, mib), make([]byte, mib)}
		if got, err := fillPieces(pieces, short, 0); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("n %d, file one byte short: copied %d, err %v; want io.ErrUnexpectedEOF", n, got, err)
		}
	}
}

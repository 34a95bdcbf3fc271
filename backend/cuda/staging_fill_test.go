package cuda

import (
	"bytes"
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
// above the size copied on several goroutines, and checks every byte and the count.
func TestFillPieces(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ n, piece, pieces int }{
		{10, 4, 3},
		{12, 4, 3},
		{100, 4, 3},
		{3*mib + 5, mib, 4},
		{4 * mib, mib, 4},
		{9 * mib, mib, 4},
		{mib/2 + 3, mib, 4}, // one partial piece
		{2*mib + 1, mib, 8}, // more pieces than bytes need: the rest stay empty
	} {
		src := make([]byte, c.n)
		for i := range src {
			src[i] = byte(i*131 + i>>9)
		}
		pieces := make([][]byte, c.pieces)
		for i := range pieces {
			pieces[i] = make([]byte, c.piece)
		}
		want := min(c.n, c.piece*c.pieces)
		got := fillPieces(pieces, src)
		if got != want {
			t.Errorf("n %d into %d×%d: copied %d, want %d", c.n, c.pieces, c.piece, got, want)
		}
		if all := bytes.Join(pieces, nil); !bytes.Equal(all[:want], src[:want]) {
			t.Errorf("n %d into %d×%d: bytes differ", c.n, c.pieces, c.piece)
		}
	}
}

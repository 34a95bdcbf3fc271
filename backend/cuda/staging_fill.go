package cuda

import "sync"

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

// fillPieces copies the head of src into pieces in order, each piece taking len(piece)
// bytes (the last what is left), and returns the bytes copied. Pieces are copied on
// their own goroutines when the payload is large enough.
func fillPieces(pieces [][]byte, src []byte) int {
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	total = min(total, len(src))
	if len(pieces) < 2 || total < fillMinBytes {
		off := 0
		for _, p := range pieces {
			off += copy(p, src[off:])
		}
		return off
	}
	var wg sync.WaitGroup
	off := len(pieces[0])
	for _, p := range pieces[1:] {
		if off >= len(src) {
			break
		}
		wg.Add(1)
		go func(p, s []byte) {
			defer wg.Done()
			copy(p, s)
		}(p, src[off:])
		off += len(p)
	}
	copy(pieces[0], src)
	wg.Wait()
	return total
}

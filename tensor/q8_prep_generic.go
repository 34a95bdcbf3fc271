package tensor

import "sync"

// The Go (portable) kernels' integer dot products of quantized weights against Q8_0
// activation blocks: four products per 64-bit multiplication. A weight word holds four
// levels u_0..u_3 in 16-bit lanes, the activation word the four int8 quants they meet in
// reverse lane order, X = Σ_k x_k·2^(16(3−k)) taken as a signed integer mod 2^64; the
// top lane of the product is then Σ_k u_k·x_k plus what the lower lanes carry or borrow
// into it. The activation words are made once per activation row (prepQ8_0) and serve
// every weight row of a tile.

// q8Prep is one Q8_0 activation block for the SWAR products: the quants as eight words
// of four (q8Words), the block scale as float32 and the exact sum of the quants.
type q8Prep struct {
	x   [8]uint64
	d   float32
	sum int32
}

// prepBlocks is the number of activation blocks the tile kernels prepare at once: 64
// blocks, 2048 elements, 4.6 KB a row.
const prepBlocks = 64

// q8PrepPool holds the tiles' prepared blocks, four rows of prepBlocks (18 KB): taken
// from a pool rather than declared, which would clear them on every call (a loss on
// small matrices).
var q8PrepPool = sync.Pool{New: func() any { return new([4][prepBlocks]q8Prep) }}

// getPrep takes a buffer of prepared blocks from q8PrepPool (put it back when done).
func getPrep() *[4][prepBlocks]q8Prep { return q8PrepPool.Get().(*[4][prepBlocks]q8Prep) }

// swarRound is added to a sum of at most four products before its top lane is read:
// the lanes below the top one add up to L with |L| < 2^47 (each lane of each product is
// a sum of at most three products u·x, |u·x| ≤ 15·128), so L + 2^47 neither borrows
// from nor carries into the top lane, which holds the exact sum as an int16
// (|Σ| ≤ 4·4·15·128 = 30720).
const swarRound = 1 << 47

// lanes4Lo is the low nibble of every other byte: levels of bytes 0, 2, 4, 6 of a word
// in its four 16-bit lanes.
const lanes4Lo = 0x000F000F000F000F

// swarTop returns the top lane of s + swarRound as a signed sum.
func swarTop(s uint64) int32 { return int32(int16((s + swarRound) >> 48)) }

// word4 packs four int8 quants a, b, c, e into lanes 3, 2, 1, 0 of a signed word.
func word4(a, b, c, e byte) uint64 {
	return uint64(int64(int8(a))<<48 + int64(int8(b))<<32 + int64(int8(c))<<16 + int64(int8(e)))
}

// q8Words sets p's words for the quants q of one block against the Q4_0 layout of
// levels: word k meets the weight word of q4Words's k (elements 0, 2, 4, 6; 1, 3, 5, 7;
// then 8.., 9.., 16.., 17.., 24.., 25.., two apart).
func q8Words(p *[8]uint64, q *[QK]byte) {
	for k := range 4 {
		e := 8*(k/2) + k%2 // 0, 1, 8, 9
		p[k] = word4(q[e], q[e+2], q[e+4], q[e+6])
		p[k+4] = word4(q[e+16], q[e+18], q[e+20], q[e+22])
	}
}

// prepQ8_0 prepares the first len(p) Q8_0 blocks of x.
func prepQ8_0(p []q8Prep, x []byte) {
	_ = x[len(p)*q8_0Bytes-1]
	for b := range p {
		xb := (*[q8_0Bytes]byte)(x[b*q8_0Bytes:])
		q := (*[QK]byte)(xb[2:])
		q8Words(&p[b].x, q)
		p[b].d = halfAt(xb[:])
		var s int32
		for _, v := range q {
			s += int32(int8(v))
		}
		p[b].sum = s
	}
}

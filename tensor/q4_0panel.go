package tensor

import "encoding/binary"

// The panel layout of Q4_0 weights: the rows of a matrix eight at a time (a panel),
// each panel block after block, so that the eight rows' block b lie together in 144
// bytes: their eight f16 scales, then their 128 bytes of nibbles, ordered for the
// level's kernel. A panel of eight rows takes the bytes those rows take in the row
// layout, at the same offset, so rows [8p, 8q) of the matrix are bytes [8p·rb, 8q·rb)
// in either layout (rb = Q4_0.RowBytes(n)).
//
// Only a level with a kernel that reads panels packs weights (Q4_0PanelTileFunc); the
// weights in the row layout stay where they are for every other reader.

// PanelTileFunc computes a tile of a matrix product over Q4_0 weights in the panel
// layout: w holds the mw/8 panels of mw weight rows (mw a multiple of 8) of n
// elements, and, for o < mw and i < mx,
//
//	dst[i*dstStride+o] = X86RepackTileFunc(Q4_0) of weight row o and activation row i
//
// bit for bit, x holding the mx activation rows (Q8_0, stride xStride).
type PanelTileFunc func(n int, w []byte, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)

// Q4_0PanelTileFunc returns this level's tile function over Q4_0 panels, or nil when
// the level has none (and weights should stay in the row layout).
func Q4_0PanelTileFunc() PanelTileFunc { return q40PanelTile() }

// q40PanelBlock is the bytes of one block of a panel: eight rows' blocks.
const q40PanelBlock = X86RepackRows * q4_0Bytes

// PackQ4_0Panels writes into dst the panel layout of the Q4_0 matrix src, whose rows
// (a multiple of 8) hold n elements each; dst and src are the same length and do not
// overlap.
func PackQ4_0Panels(dst, src []byte, n int) {
	nb := n / QK
	rb := nb * q4_0Bytes
	if rb == 0 || len(src)%(X86RepackRows*rb) != 0 || len(dst) != len(src) {
		panic("tensor: PackQ4_0Panels: not whole panels of Q4_0 rows")
	}
	for p := 0; p < len(src); p += X86RepackRows * rb {
		packQ4_0Panel(dst[p:p+X86RepackRows*rb], src[p:p+X86RepackRows*rb], nb)
	}
}

// packQ4_0Panel packs one panel of eight rows of nb blocks: per block the rows' eight
// scales, then the 8-byte groups g of their 128 bytes of nibbles, group g holding bytes
// 0-7 (g/4 even) or 8-15 (g/4 odd) of row [0 1 4 5 0 1 4 5 2 3 6 7 2 3 6 7][g]; each
// row's block is read once as two words.
func packQ4_0Panel(dst, src []byte, nb int) {
	rb := nb * q4_0Bytes
	_, _ = dst[nb*q40PanelBlock-1], src[X86RepackRows*rb-1]
	le := binary.LittleEndian
	var lo, hi [X86RepackRows]uint64
	for b := range nb {
		d := (*[q40PanelBlock]byte)(dst[b*q40PanelBlock:])
		for r := range X86RepackRows {
			s := (*[q4_0Bytes]byte)(src[r*rb+b*q4_0Bytes:])
			d[2*r], d[2*r+1] = s[0], s[1]
			lo[r], hi[r] = le.Uint64(s[2:10]), le.Uint64(s[10:18])
		}
		// Bytes 0-7 (lo) and 8-15 (hi) of rows 0,1,4,5, then of rows 2,3,6,7.
		le.PutUint64(d[16:], lo[0])
		le.PutUint64(d[24:], lo[1])
		le.PutUint64(d[32:], lo[4])
		le.PutUint64(d[40:], lo[5])
		le.PutUint64(d[48:], hi[0])
		le.PutUint64(d[56:], hi[1])
		le.PutUint64(d[64:], hi[4])
		le.PutUint64(d[72:], hi[5])
		le.PutUint64(d[80:], lo[2])
		le.PutUint64(d[88:], lo[3])
		le.PutUint64(d[96:], lo[6])
		le.PutUint64(d[104:], lo[7])
		le.PutUint64(d[112:], hi[2])
		le.PutUint64(d[120:], hi[3])
		le.PutUint64(d[128:], hi[6])
		le.PutUint64(d[136:], hi[7])
	}
}

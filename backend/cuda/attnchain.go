//go:build cgo

package cuda

import (
	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// A batch-1 decode step calls, between its q/k/v mat-vecs and the o mat-vec, RoPE of q,
// RoPE of k, SetRows of k and of v into the caches, and Attention. pair.go holds the
// RoPEs and the SetRows in pairs; when the RoPEs are of one row over an F16 cache's head
// dimension, the pair is instead kept (attnChain) with the SetRows that follow, and an
// Attention that reads exactly what they wrote launches all five as one kernel
// (attention_gqa_* with fused set: attendGrouped). Any other call launches the held
// part as the pairs would have been (launchChain), in order.

// attnChain is the RoPE twins of q and k, and the cache stores of k and v once they came.
type attnChain struct {
	q, k       *heldPair // RoPE of q, of k
	setK, setV *heldPair // SetRows of the rotated k and of v, or nil
}

// chains reports whether the RoPE twins p (of q) and r (of k) may start a chain: one
// row each, a head dimension with a fused kernel, fusion on and the pair kernels there
// (the chain's fallback launches).
func (d *Device) chains(p, r *heldPair) bool {
	_, _, ok := gqaEntry(tensor.F16, p.rp.headDim, 1, 0)
	return ok && !d.noFuse && p.rope && r.rope && p.a.rows == 1 && r.a.rows == 1 && p.rp.dims <= p.rp.headDim &&
		d.has("rope2_f32") && d.has("set_rows2_f16")
}

// heldChain returns the held chain, if any; it runs under the lock.
func (d *Device) heldChain() *attnChain {
	if d.pair == nil {
		return nil
	}
	return d.pair.chain
}

// takes adds the SetRows s to the chain and reports whether it did: first the store of
// the rotated k (its source the RoPE's k, at the RoPEs' positions), then its twin, the
// store of v into a cache of the same shape; neither cache overlaps q, k or the
// positions, and v is neither q nor k.
func (c *attnChain) takes(s *heldPair) bool {
	if s.rope || s.dst.dt != tensor.F16 || s.rows.ptr != c.q.rows.ptr || s.rows.rows != 1 ||
		overlaps(s.dst, c.q.a) || overlaps(s.dst, c.k.a) || overlaps(s.dst, s.rows) {
		return false
	}
	switch {
	case c.setK == nil:
		if s.a.ptr != c.k.a.ptr || s.a.rows != c.k.a.rows || s.a.cols != c.k.a.cols {
			return false
		}
		c.setK = s
	case c.setV == nil:
		k := c.setK
		if !k.twin(s) || s.a.cols != k.a.cols || s.dst.rows != k.dst.rows || s.dst.cols != k.dst.cols ||
			overlaps(s.a, c.q.a) || overlaps(s.a, c.k.a) {
			return false
		}
		c.setV = s
	default:
		return false
	}
	return true
}

// feeds reports whether attention into o of q over the caches k, v at positions p, with
// g query heads a block, reads what the complete chain c writes and can be its fused
// launch: one row, the chain's q, caches and positions, g dividing the K/V heads' group,
// and o overlapping nothing the kernel reads.
func (c *attnChain) feeds(o, q, k, v, p *Buffer, at backend.Attention, g int) bool {
	if c.setV == nil || o.rows != 1 || g < 1 || (at.Heads/at.KVHeads)%g != 0 || c.q.rp.headDim != at.HeadDim {
		return false
	}
	same := func(a, b *Buffer) bool { return a.ptr == b.ptr && a.rows == b.rows && a.cols == b.cols }
	if !same(q, c.q.a) || !same(k, c.setK.dst) || !same(v, c.setV.dst) || p.ptr != c.q.rows.ptr {
		return false
	}
	for _, b := range []*Buffer{q, c.k.a, c.setV.a, k, v, p} {
		if overlaps(o, b) {
			return false
		}
	}
	return true
}

// launchChain launches the held chain as the pairs it replaces: rope2_f32, then
// set_rows2_f16 (or set_rows_f16 alone); it runs under the lock.
func (d *Device) launchChain(c *attnChain) error {
	if err := d.launchPair(c.q, c.k); err != nil {
		return err
	}
	if c.setK == nil {
		return nil
	}
	return d.launchPair(c.setK, c.setV)
}

//go:build cgo

package cuda

// Pairing of the small kernels between the q/k/v mat-vecs and attention: RoPE of q then
// of k, and SetRows of k then of v into the caches, each pair in one launch (rope2_f32,
// set_rows2_*) rather than two. The first call of a pair is held (like a mat-vec, see
// fuse.go) until its twin comes or any other call launches it alone.

// ropeParams are a RoPE call's parameters besides x: its twin must share them.
type ropeParams struct {
	pos, factors  uint64
	headDim, dims int
	base, scale   float32
	neox          int
}

// heldPair is a RoPE (rope) or SetRows call not launched yet.
type heldPair struct {
	rope bool
	a    *Buffer // RoPE: x; SetRows: src
	dst  *Buffer // SetRows: the cache
	rows *Buffer // RoPE: positions; SetRows: row indices
	rp   ropeParams
}

// twin reports whether q can share p's launch: the same kind, rows and parameters, and
// no buffer of one written by the other.
func (p *heldPair) twin(q *heldPair) bool {
	if p.rope != q.rope || p.rows.ptr != q.rows.ptr || p.a.rows != q.a.rows || overlaps(p.a, q.a) {
		return false
	}
	if p.rope {
		return p.rp == q.rp
	}
	return p.dst.dt == q.dst.dt && !overlaps(p.dst, q.dst) && !overlaps(p.dst, q.a) && !overlaps(q.dst, p.a)
}

// holdPair holds q, or launches it with the held twin.
func (d *Device) holdPair(q *heldPair) {
	entry := "rope_f32"
	if !q.rope {
		entry = "set_rows_" + typeName(q.dst.dt)
	}
	d.enqueueAs(entry, kernelCall|holdCall|exactCall, func() error {
		if p := d.pair; p != nil && p.twin(q) {
			d.pair = nil
			return d.launchPair(p, q)
		}
		if err := d.flush(); err != nil {
			return err
		}
		if d.noFuse || !d.has(pairEntry(q)) {
			return d.launchPair(q, nil)
		}
		d.pair = q
		return nil
	})
}

// pairEntry is the two-matrix kernel of p's kind.
func pairEntry(p *heldPair) string {
	if p.rope {
		return "rope2_f32"
	}
	return "set_rows2_" + typeName(p.dst.dt)
}

// launchPair launches p alone (q nil) or p and q together, and reports what they write
// (wrote: holdPair is an exact call); it runs under the lock.
func (d *Device) launchPair(p, q *heldPair) error {
	for _, h := range []*heldPair{p, q} {
		switch {
		case h == nil:
		case h.rope:
			defer d.wrote(h.a)
		default:
			defer d.wrote(h.dst)
		}
	}
	n, block := p.a.rows, dim3{threads, 1, 1}
	if p.rope {
		r := p.rp
		pairs := func(x *Buffer) int { return x.cols / r.headDim * r.dims / 2 }
		if q == nil {
			a := new(args).ptr(p.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
			return d.launch("rope_f32", dim3{n, ceilDiv(pairs(p.a), threads), 1}, block, a)
		}
		a := new(args).ptr(p.a.ptr).ptr(q.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(q.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
		return d.launch("rope2_f32", dim3{n, ceilDiv(max(pairs(p.a), pairs(q.a)), threads), 2}, block, a)
	}
	if q == nil {
		a := new(args).ptr(p.dst.ptr).ptr(p.a.ptr).ptr(p.rows.ptr).i32(p.a.cols)
		return d.launch("set_rows_"+typeName(p.dst.dt), dim3{n, ceilDiv(p.a.cols, threads), 1}, block, a)
	}
	a := new(args).ptr(p.dst.ptr).ptr(p.a.ptr).ptr(q.dst.ptr).ptr(q.a.ptr).ptr(p.rows.ptr).i32(p.a.cols).i32(q.a.cols)
	return d.launch(pairEntry(p), dim3{n, ceilDiv(max(p.a.cols, q.a.cols), threads), 2}, block, a)
}

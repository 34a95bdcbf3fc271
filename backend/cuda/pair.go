//go:build cgo

package cuda

// Pairing of the small kernels between the q/k/v mat-vecs and attention: RoPE of q then
// of k, and SetRows of k then of v into the caches, each pair in one launch (rope2_f32,
// set_rows2_*) rather than two. The first call of a pair is held (like a mat-vec, see
// fuse.go) until its twin comes or any other call launches it alone.
//
// The per-head RMS norms of q and k (qwen3), in place, are held the same way
// (heldPair.norms): the norm of q, then of k, then the RoPE of q and of k join the held
// norms, and the four calls launch as one norm_rope2_f32. Any other call launches what
// is held so far with the same kernel (norms alone, or with the RoPEs that came).

// ropeParams are a RoPE call's parameters besides x: its twin must share them.
type ropeParams struct {
	pos, factors  uint64
	headDim, dims int
	base, scale   float32
	neox          int
}

// heldPair is a RoPE (rope) or SetRows call not launched yet, or per-head norms
// (norms not empty) with the RoPEs that followed them.
type heldPair struct {
	rope  bool
	a     *Buffer // RoPE: x; SetRows: src
	dst   *Buffer // SetRows: the cache
	rows  *Buffer // RoPE: positions; SetRows: row indices
	rp    ropeParams
	norms []heldNorm // per-head norms of up to two matrices (q, k), in call order
	chain *attnChain // RoPEs and cache stores held for attention (attnchain.go); nothing else set
}

// heldNorm is a per-head RMSNorm of x in place, weight w (1, head dim), and the RoPE of
// x that followed it, if any.
type heldNorm struct {
	x, w *Buffer
	eps  float32
	rope *heldPair
}

// twin reports whether q can share p's launch: the same kind, rows and parameters, and
// no buffer of one written by the other.
func (p *heldPair) twin(q *heldPair) bool {
	if p.norms != nil || p.rope != q.rope || p.rows.ptr != q.rows.ptr || p.a.rows != q.a.rows || overlaps(p.a, q.a) {
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
		entry = setRowsEntry(q.dst.dt, false)
	}
	d.enqueueAs(entry, kernelCall|holdCall|exactCall, func() error {
		if c := d.heldChain(); c != nil {
			if c.takes(q) {
				return nil
			}
			if err := d.flush(); err != nil {
				return err
			}
		}
		if p := d.pair; p != nil && p.takesRope(q) {
			if p.norms[len(p.norms)-1].rope == nil { // q and k normalised, k's RoPE to come
				return nil
			}
			d.pair = nil
			return d.launchNorms(p)
		}
		if p := d.pair; p != nil && p.twin(q) {
			d.pair = nil
			if d.chains(p, q) {
				d.pair = &heldPair{chain: &attnChain{q: p, k: q}}
				return nil
			}
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
	return setRowsEntry(p.dst.dt, true)
}

// launchPair launches p alone (q nil) or p and q together, and reports what they write
// (wrote: holdPair is an exact call); it runs under the lock.
func (d *Device) launchPair(p, q *heldPair) error {
	if p.chain != nil {
		return d.launchChain(p.chain)
	}
	if p.norms != nil {
		return d.launchNorms(p)
	}
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
		if d.ropeRows(n, r) {
			return d.launchRopeRows(p, q)
		}
		if q == nil {
			a := new(args).ptr(p.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
			return d.launch("rope_f32", dim3{n, ceilDiv(pairs(p.a), threads), 1}, block, a)
		}
		a := new(args).ptr(p.a.ptr).ptr(q.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(q.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
		return d.launch("rope2_f32", dim3{n, ceilDiv(max(pairs(p.a), pairs(q.a)), threads), 2}, block, a)
	}
	if q == nil {
		a := new(args).ptr(p.dst.ptr).ptr(p.a.ptr).ptr(p.rows.ptr).i32(p.a.cols)
		return d.launch(setRowsEntry(p.dst.dt, false), dim3{n, ceilDiv(p.a.cols, setRowsPerBlock), 1}, block, a)
	}
	a := new(args).ptr(p.dst.ptr).ptr(p.a.ptr).ptr(q.dst.ptr).ptr(q.a.ptr).ptr(p.rows.ptr).i32(p.a.cols).i32(q.a.cols)
	return d.launch(pairEntry(p), dim3{n, ceilDiv(max(p.a.cols, q.a.cols), setRowsPerBlock), 2}, block, a)
}

// setRowsPerBlock is the row elements one block of set_rows*.cu stores: four a thread.
const setRowsPerBlock = 4 * threads

// normEntry is the kernel of held per-head norms and their RoPEs.
const normEntry = "norm_rope2_f32"

// holdNorm holds the per-head RMSNorm of x in place (weight w, one head), or launches
// it: alone when fusion is off or the kernels lack normEntry, else with the held norm
// it cannot join.
func (d *Device) holdNorm(x, w *Buffer, eps float32) {
	n := heldNorm{x: x, w: w, eps: eps}
	d.enqueueAs("rms_norm_f32", kernelCall|holdCall|exactCall, func() error {
		if p := d.pair; p != nil && p.takesNorm(n) {
			p.norms = append(p.norms, n)
			return nil
		}
		if err := d.flush(); err != nil {
			return err
		}
		if d.noFuse || !d.has(normEntry) {
			defer d.wrote(x)
			return d.headNorm(x, x, w, eps)
		}
		d.pair = &heldPair{norms: []heldNorm{n}}
		return nil
	})
}

// headNorm launches the per-head RMSNorm of x into o (weight w, one head) by itself:
// the row kernel over (rows·heads, w.cols); it runs under the lock.
func (d *Device) headNorm(o, x, w *Buffer, eps float32) error {
	a := new(args).ptr(o.ptr).ptr(x.ptr).ptr(w.ptr).i32(w.cols).f32(eps)
	return d.launch("rms_norm_f32", dim3{x.rows * (x.cols / w.cols), 1, 1}, dim3{normBlock(w.cols), 1, 1}, a)
}

// normBlock is the block of a per-head norm over groups of n elements: n threads
// rounded up to a warp, at most normThreads.
func normBlock(n int) int { return min(normThreads, ceilDiv(n, 32)*32) }

// fusesNorm reports whether a per-head RMSNorm of x (n, cols) with dst dst and groups of
// g elements can be held: in place, and a group within one block of the fused kernel.
func fusesNorm(dst, x *Buffer, g int) bool {
	return dst.ptr == x.ptr && g <= normThreads && x.rows > 0
}

// takesNorm reports whether n can join p's held norm: p holds one norm, with no RoPE
// yet, of the same rows, head size and eps, and neither norm reads or writes what the
// other writes.
func (p *heldPair) takesNorm(n heldNorm) bool {
	if len(p.norms) != 1 {
		return false
	}
	m := p.norms[0]
	return m.rope == nil && m.x.rows == n.x.rows && m.w.cols == n.w.cols && m.eps == n.eps &&
		!overlaps(m.x, n.x) && !overlaps(m.x, n.w) && !overlaps(n.x, m.w)
}

// takesRope attaches the RoPE q to p's held norms and reports whether it did: q rotates,
// in heads of the norms' size, the first normalised matrix without a RoPE yet, after
// the RoPEs before it and with their parameters, and its positions and factors are no
// normalised matrix.
func (p *heldPair) takesRope(q *heldPair) bool {
	if p.norms == nil || !q.rope {
		return false
	}
	i := 0
	for i < len(p.norms) && p.norms[i].rope != nil {
		i++
	}
	if i == len(p.norms) {
		return false
	}
	n := &p.norms[i]
	if q.a.ptr != n.x.ptr || q.a.rows != n.x.rows || q.a.cols != n.x.cols || q.rp.headDim != n.w.cols {
		return false
	}
	if i > 0 && (q.rp != p.norms[0].rope.rp || q.rows.ptr != p.norms[0].rope.rows.ptr) {
		return false
	}
	for _, m := range p.norms {
		if overlaps(q.rows, m.x) || q.rp.factors != 0 && q.rp.factors >= m.x.ptr && q.rp.factors < m.x.ptr+uint64(m.x.Bytes()) {
			return false
		}
	}
	n.rope = q
	return true
}

// launchNorms launches p's held norms and the RoPEs that joined them as one
// norm_rope2_f32, and reports what it writes; it runs under the lock.
func (d *Device) launchNorms(p *heldPair) error {
	n0 := p.norms[0]
	g := n0.w.cols
	x1, w1, heads1, rope1 := uint64(0), uint64(0), 0, 0
	if len(p.norms) > 1 {
		n1 := p.norms[1]
		x1, w1, heads1 = n1.x.ptr, n1.w.ptr, n1.x.cols/g
		if n1.rope != nil {
			rope1 = 1
		}
	}
	var rp ropeParams
	var pos uint64
	rope0 := 0
	if r := n0.rope; r != nil {
		rp, pos, rope0 = r.rp, r.rows.ptr, 1
	}
	for _, n := range p.norms {
		defer d.wrote(n.x)
	}
	heads0 := n0.x.cols / g
	a := new(args).ptr(n0.x.ptr).ptr(x1).ptr(n0.w.ptr).ptr(w1).ptr(pos).ptr(rp.factors).
		i32(heads0).i32(heads1).i32(g).f32(n0.eps).i32(rp.dims).f32(rp.base).f32(rp.scale).i32(rp.neox).i32(rope0).i32(rope1)
	return d.launch(normEntry, dim3{n0.x.rows * (heads0 + heads1), 1, 1}, dim3{normBlock(g), 1, 1}, a)
}

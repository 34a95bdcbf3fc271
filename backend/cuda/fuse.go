//go:build cgo

package cuda

import (
	"github.com/infergo/infer/tensor"
)

// Kernel fusion for batch-1 decode, behind the unchanged Kernels interface.
//
// A decode step is some twenty small kernels a layer, and at 7B sizes each mat-vec
// streams only 9 to 25 MB, a few microseconds, so launch gaps and ramp-up weigh as much
// as the bytes. The device therefore holds a batch-1 MatMul back instead of launching
// it (heldMV) and launches it with what follows when that fits:
//   - further MatMuls of the same activation row join the same launch (q, k, v; gate,
//     up): mv_fused_<type> takes up to three matrices;
//   - an Add of one row (a bias) into a held output becomes that matrix's epilogue
//     (qwen2's q, k and v biases: mv_fusedb_<type>), and the launch stays held;
//   - an Add of its output into another buffer (the residual) becomes the mat-vec's
//     epilogue, as long as the held launch has one matrix.
//
// Any other device call launches the held work first (do flushes it), so the order of
// effects is the order of calls. RMSNorm and SwiGLU also quantize their output for the
// mat-vec that follows (rms_norm_q8, swiglu_q8), saving the quantize_q8 launch.

// maxFused is the number of matrices one mv_fused launch takes.
const maxFused = 3

// heldMV is batch-1 mat-vecs of one activation row x not launched yet.
type heldMV struct {
	wdt  tensor.DType
	x    *Buffer
	dsts []*Buffer // dst i = x · w[i]ᵀ (+ bias[i])
	ws   []*Buffer
	bias [maxFused]*Buffer // one row added to dsts[i] (its bias epilogue), or nil
	add  *Buffer           // residual target: add += dsts[0], or nil (never with a bias)
}

// biased reports whether a bias joined h (it then launches as mv_fusedb_<type>).
func (h *heldMV) biased() bool { return h.bias != [maxFused]*Buffer{} }

// fusedEntry is the fused mat-vec kernel of weight type dt.
func fusedEntry(dt tensor.DType) string { return kernelsOf(dt).fused }

// fusedBiasEntry is the fused mat-vec kernel of weight type dt with a bias per matrix.
func fusedBiasEntry(dt tensor.DType) string { return kernelsOf(dt).fusedBias }

// overlaps reports whether two buffers share any byte.
func overlaps(a, b *Buffer) bool {
	return a.ptr < b.ptr+uint64(b.Bytes()) && b.ptr < a.ptr+uint64(a.Bytes())
}

// joins reports whether dst = x · wᵀ can join h's launch.
func (h *heldMV) joins(dst, w, x *Buffer) bool {
	if h.add != nil || len(h.ws) == maxFused || w.dt != h.wdt || x.ptr != h.x.ptr || x.cols != h.x.cols || x.rows != 1 {
		return false
	}
	for i, o := range h.dsts {
		if overlaps(o, dst) || h.bias[i] != nil && overlaps(h.bias[i], dst) {
			return false
		}
	}
	return true
}

// biasHeld makes dst += bias the epilogue of the held mat-vec that writes dst, when dst is
// one of its outputs (one row) and bias one row of dst's width that none of them writes;
// it reports whether it did, and runs under do. The launch stays held: the k and v
// biases and the RoPEs that follow may still join or chain.
func (d *Device) biasHeld(dst, bias *Buffer) bool {
	h := d.held
	if h == nil || h.add != nil || dst.rows != 1 || bias.rows != 1 || bias.cols != dst.cols || overlaps(bias, h.x) {
		return false
	}
	at := -1
	for i, o := range h.dsts {
		if overlaps(o, bias) {
			return false
		}
		if o.ptr == dst.ptr && o.rows == dst.rows && o.cols == dst.cols {
			at = i
		}
	}
	if at < 0 || h.bias[at] != nil || !d.has(fusedBiasEntry(h.wdt)) {
		return false
	}
	h.bias[at] = bias
	return true
}

// holdMatVec holds dst = x · wᵀ (x one row, dst not overlapping x) for fusion.
func (d *Device) holdMatVec(o, w, x *Buffer) {
	d.enqueueAs("MatMul", kernelCall|holdCall|exactCall, func() error {
		if !d.has(fusedEntry(w.dt)) { // PTX without the fused kernels
			if err := d.flush(); err != nil {
				return err
			}
			return d.matVec(o, w, x)
		}
		if h := d.held; h != nil && h.joins(o, w, x) {
			h.dsts, h.ws = append(h.dsts, o), append(h.ws, w)
			return nil
		}
		if err := d.flush(); err != nil {
			return err
		}
		d.held = &heldMV{wdt: w.dt, x: x, dsts: []*Buffer{o}, ws: []*Buffer{w}}
		return nil
	})
}

// addHeld makes dst += x the epilogue of the held mat-vec when x is its one output; it
// reports whether it did, and runs under do.
func (d *Device) addHeld(dst, x *Buffer) bool {
	h := d.held
	if h == nil || h.add != nil || len(h.dsts) != 1 || h.biased() {
		return false
	}
	out := h.dsts[0]
	if out.ptr != x.ptr || out.rows != x.rows || out.cols != x.cols || overlaps(dst, out) || overlaps(dst, h.x) {
		return false
	}
	h.add = dst
	return true
}

// flush launches the held mat-vecs or kernel pair (pair.go), if any; it runs under do.
func (d *Device) flush() error {
	if p := d.pair; p != nil {
		d.pair = nil
		if err := d.launchPair(p, nil); err != nil {
			return err
		}
	}
	h := d.held
	if h == nil {
		return nil
	}
	d.held = nil
	return d.launchHeld(h)
}

// launchHeld launches h's mat-vecs, and their biases or residual add, as one mv_fused
// (mv_fusedb with biases) kernel; it runs under do.
func (d *Device) launchHeld(h *heldMV) error {
	r := mvRows(h.wdt, 1)
	var ends [maxFused]int
	var ptrs [2 * maxFused]uint64
	var rows [maxFused]int
	total := 0
	for i, w := range h.ws {
		total += ceilDiv(w.rows, r)
		ends[i], rows[i] = total, w.rows
		ptrs[i], ptrs[maxFused+i] = w.ptr, h.dsts[i].ptr
	}
	for i := len(h.ws); i < maxFused; i++ {
		ends[i] = total
	}
	var add uint64
	if h.add != nil {
		add = h.add.ptr
	}
	entry := fusedEntry(h.wdt)
	a := new(args)
	for _, p := range ptrs {
		a.ptr(p)
	}
	if h.biased() {
		entry = fusedBiasEntry(h.wdt)
		for _, b := range h.bias {
			var p uint64
			if b != nil {
				p = b.ptr
			}
			a.ptr(p)
		}
	} else {
		a.ptr(add)
	}
	a.i32(rows[0]).i32(rows[1]).i32(rows[2]).i32(ends[0]).i32(ends[1]).i32(h.x.cols)
	if quantized(h.wdt) {
		xq, xd, err := d.quantizeQ8(h.x)
		if err != nil {
			return err
		}
		a.ptr(xq).ptr(xd)
	} else {
		a.ptr(h.x.ptr)
	}
	if err := d.launch(entry, dim3{total, 1, 1}, dim3{mvWarps * 32, 1, 1}, a); err != nil {
		return err
	}
	for _, o := range h.dsts {
		d.wrote(o)
	}
	if h.add != nil {
		d.wrote(h.add)
	}
	return nil
}

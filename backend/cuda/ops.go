//go:build cgo

package cuda

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// threads is the block size of the row and element-wise kernels.
const threads = 256

// normThreads is the block size of rms_norm: one block a row, so a decode row's latency
// is the kernel's.
const normThreads = 1024

// maxGrid caps the grid of the grid-stride element-wise kernels.
const maxGrid = 1 << 16

// need panics with a "cuda:" message when a kernel method is misused (shapes, types):
// programmer error, per the backend contract.
func need(ok bool, format string, a ...any) {
	if !ok {
		panic("cuda: " + fmt.Sprintf(format, a...))
	}
}

// Embed sets row i of dst (n, dim) to row tokens[i] of table (vocab, dim), dequantized.
func (d *Device) Embed(dst, table, tokens backend.Buffer) {
	o, t, ids := d.buffer(dst, "Embed dst"), d.buffer(table, "Embed table"), d.buffer(tokens, "Embed tokens")
	need(o.dt == tensor.F32 && o.cols == t.cols, "Embed: dst %v (%d, %d), table %v (%d, %d)", o.dt, o.rows, o.cols, t.dt, t.rows, t.cols)
	need(ids.dt == tensor.I32 && ids.rows == o.rows, "Embed: tokens %v (%d, %d) for %d rows", ids.dt, ids.rows, ids.cols, o.rows)
	a := new(args).ptr(o.ptr).ptr(t.ptr).ptr(ids.ptr).i32(o.cols)
	d.run(kernelsOf(t.dt).embed, dim3{o.rows, ceilDiv(o.cols, threads), 1}, dim3{threads, 1, 1}, a)
}

// RMSNorm sets each group of weight's elements of each row of dst to x/rms(x) ⊙
// weight; weight is one F32 row whose length divides the rows' (the whole row, or one
// head). dst may be x.
func (d *Device) RMSNorm(dst, x, weight backend.Buffer, eps float32) {
	o, v, w := d.buffer(dst, "RMSNorm dst"), d.buffer(x, "RMSNorm x"), d.buffer(weight, "RMSNorm weight")
	need(o.dt == tensor.F32 && v.dt == tensor.F32 && w.dt == tensor.F32, "RMSNorm: types %v %v %v", o.dt, v.dt, w.dt)
	need(o.rows == v.rows && o.cols == v.cols && w.rows == 1 && w.cols > 0 && v.cols%w.cols == 0,
		"RMSNorm: shapes (%d, %d) (%d, %d) (%d, %d)", o.rows, o.cols, v.rows, v.cols, w.rows, w.cols)
	a := new(args).ptr(o.ptr).ptr(v.ptr).ptr(w.ptr)
	if w.cols != v.cols {
		// Per head: the groups lie one after the other, so the row kernel runs over
		// (rows·groups, w.cols), a block of w.cols threads (rounded to a warp) each. No
		// fused quantization: a group need not be whole Q8 blocks, and the per-head norm
		// (of q and k) feeds no mat-vec.
		// In place (qwen3's q and k), the norm is held to launch with the other's and
		// with their RoPEs (pair.go).
		if fusesNorm(o, v, w.cols) {
			d.holdNorm(v, w, eps)
			return
		}
		d.enqueue("rms_norm_f32", func() error { return d.headNorm(o, v, w, eps) })
		return
	}
	grid, block := dim3{v.rows, 1, 1}, dim3{normThreads, 1, 1}
	if !d.q8Next(o) {
		d.run("rms_norm_f32", grid, block, a.i32(v.cols).f32(eps))
		return
	}
	d.enqueue("rms_norm_q8", func() error {
		if !d.has("rms_norm_q8") {
			return d.launch("rms_norm_f32", grid, block, a.i32(v.cols).f32(eps))
		}
		xq, xd, err := d.q8Scratch(o.rows, o.cols)
		if err != nil {
			return err
		}
		if err := d.launch("rms_norm_q8", grid, block, a.ptr(xq).ptr(xd).i32(v.cols).f32(eps)); err != nil {
			return err
		}
		d.q8 = d.q8KeyOf(o)
		return nil
	})
}

// q8Next reports whether an activation written to o is worth quantizing on the way for
// the mat-vec kernels: a decode-sized batch of whole 32-element blocks.
func (d *Device) q8Next(o *Buffer) bool {
	return !d.noFuse && o.rows < gemmMinRows && o.cols%32 == 0
}

// RoPE rotates x (n, heads·headDim) in place; row i is at position positions[i].
func (d *Device) RoPE(x, positions backend.Buffer, r backend.Rope) {
	v, p := d.buffer(x, "RoPE x"), d.buffer(positions, "RoPE positions")
	need(v.dt == tensor.F32 && p.dt == tensor.I32 && p.rows == v.rows, "RoPE: x %v (%d rows), positions %v (%d rows)", v.dt, v.rows, p.dt, p.rows)
	need(r.HeadDim > 0 && v.cols%r.HeadDim == 0 && r.Dims > 0 && r.Dims <= r.HeadDim && r.Dims%2 == 0, "RoPE: cols %d, head dim %d, dims %d", v.cols, r.HeadDim, r.Dims)
	var factors uint64
	if r.Factors != nil {
		f := d.buffer(r.Factors, "RoPE factors")
		need(f.dt == tensor.F32 && f.cols*f.rows >= r.Dims/2, "RoPE: factors %v (%d, %d)", f.dt, f.rows, f.cols)
		factors = f.ptr
	}
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	neox := 0
	if r.NeoX {
		neox = 1
	}
	rp := ropeParams{pos: p.ptr, factors: factors, headDim: r.HeadDim, dims: r.Dims, base: r.Base, scale: scale, neox: neox}
	d.holdPair(&heldPair{rope: true, a: v, rows: p, rp: rp})
}

// SetRows stores row i of src (n, cols) F32 into row rows[i] of dst (F32 or F16).
func (d *Device) SetRows(dst, src, rows backend.Buffer) {
	o, s, r := d.buffer(dst, "SetRows dst"), d.buffer(src, "SetRows src"), d.buffer(rows, "SetRows rows")
	need(s.dt == tensor.F32 && (o.dt == tensor.F32 || o.dt == tensor.F16) && o.cols == s.cols, "SetRows: dst %v (%d, %d), src %v (%d, %d)", o.dt, o.rows, o.cols, s.dt, s.rows, s.cols)
	need(r.dt == tensor.I32 && r.rows == s.rows, "SetRows: rows %v (%d, %d) for %d rows", r.dt, r.rows, r.cols, s.rows)
	d.holdPair(&heldPair{dst: o, a: s, rows: r})
}

// SwiGLU sets dst = silu(gate) ⊙ up, element-wise.
func (d *Device) SwiGLU(dst, gate, up backend.Buffer) {
	o, g, u := d.buffer(dst, "SwiGLU dst"), d.buffer(gate, "SwiGLU gate"), d.buffer(up, "SwiGLU up")
	need(sameF32(o, g) && sameF32(o, u), "SwiGLU: shapes or types differ")
	if d.swigluH16(o, g, u) {
		return
	}
	if !d.q8Next(o) {
		d.elementwise("swiglu_f32", new(args).ptr(o.ptr).ptr(g.ptr).ptr(u.ptr), o.rows*o.cols)
		return
	}
	n := o.rows * o.cols
	grid, block := dim3{min(ceilDiv(n, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}
	d.enqueue("swiglu_q8", func() error {
		a := new(args).ptr(o.ptr).ptr(g.ptr).ptr(u.ptr)
		if !d.has("swiglu_q8") {
			return d.launch("swiglu_f32", grid, block, a.u64(uint64(n)))
		}
		xq, xd, err := d.q8Scratch(o.rows, o.cols)
		if err != nil {
			return err
		}
		if err := d.launch("swiglu_q8", grid, block, a.ptr(xq).ptr(xd).u64(uint64(n))); err != nil {
			return err
		}
		d.q8 = d.q8KeyOf(o)
		return nil
	})
}

// maxGridY caps the grid's y dimension, the rows of add_row_f32.
const maxGridY = 65535

// Add sets dst += x, element-wise; x is dst's shape or one row, added to every row of
// dst (a bias).
func (d *Device) Add(dst, x backend.Buffer) {
	o, v := d.buffer(dst, "Add dst"), d.buffer(x, "Add x")
	need(o.dt == tensor.F32 && v.dt == tensor.F32 && o.cols == v.cols && (v.rows == o.rows || v.rows == 1),
		"Add: dst %v (%d, %d), x %v (%d, %d)", o.dt, o.rows, o.cols, v.dt, v.rows, v.cols)
	if v.rows != o.rows { // a row over several: never a held mat-vec's epilogue
		d.enqueue("add_row_f32", func() error {
			if !d.has("add_row_f32") { // older PTX: add_f32 row by row
				for r := 0; r < o.rows; r++ {
					a := new(args).ptr(o.ptr + uint64(r*o.cols*4)).ptr(v.ptr).u64(uint64(o.cols))
					if err := d.launch("add_f32", dim3{min(ceilDiv(o.cols, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a); err != nil {
						return err
					}
				}
				return nil
			}
			a := new(args).ptr(o.ptr).ptr(v.ptr).i32(o.rows).i32(o.cols)
			return d.launch("add_row_f32", dim3{ceilDiv(o.cols, threads), min(o.rows, maxGridY), 1}, dim3{threads, 1, 1}, a)
		})
		return
	}
	n := o.rows * o.cols
	d.enqueueAs("add_f32", kernelCall|holdCall, func() error {
		if d.biasHeld(o, v) { // a bias of a held mat-vec's output: its epilogue, still held
			return nil
		}
		if d.addHeld(o, v) { // the residual add of a held mat-vec: its epilogue
			return d.flush()
		}
		if err := d.flush(); err != nil {
			return err
		}
		a := new(args).ptr(o.ptr).ptr(v.ptr).u64(uint64(n))
		return d.launch("add_f32", dim3{min(ceilDiv(n, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a)
	})
}

// Copy copies src into dst of the same shape, converting between F32 and F16.
func (d *Device) Copy(dst, src backend.Buffer) {
	o, s := d.buffer(dst, "Copy dst"), d.buffer(src, "Copy src")
	float := func(t tensor.DType) bool { return t == tensor.F32 || t == tensor.F16 }
	need(float(o.dt) && float(s.dt) && o.rows == s.rows && o.cols == s.cols, "Copy: dst %v (%d, %d), src %v (%d, %d)", o.dt, o.rows, o.cols, s.dt, s.rows, s.cols)
	d.elementwise(copyEntry(s.dt, o.dt), new(args).ptr(o.ptr).ptr(s.ptr), o.rows*o.cols)
}

// elementwise launches a grid-stride kernel over n elements; a's last parameter, n, is
// appended here.
func (d *Device) elementwise(entry string, a *args, n int) {
	a.u64(uint64(n))
	d.run(entry, dim3{min(ceilDiv(n, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a)
}

func sameF32(a, b *Buffer) bool {
	return a.dt == tensor.F32 && b.dt == tensor.F32 && a.rows == b.rows && a.cols == b.cols
}

package cpu

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Embed sets row i of dst (n, dim) to row tokens[i] of table (vocab, dim), dequantized
// (ggml_get_rows). A token outside the table is recorded as the device's failure.
func (d *Device) Embed(dst, table, tokens backend.Buffer) {
	o := d.arg("Embed", "dst", dst, tensor.F32)
	t := d.arg("Embed", "table", table)
	ids := d.arg("Embed", "tokens", tokens, tensor.I32)
	shape("Embed", "tokens", ids, o.rows, 1)
	if t.cols != o.cols {
		panic(fmt.Sprintf("cpu: Embed: table has %d columns, dst %d", t.cols, o.cols))
	}
	if !d.lock("Embed") {
		return
	}
	defer d.mu.Unlock()
	ov := o.f32()
	for i, id := range ids.i32() {
		if id < 0 || int(id) >= t.rows {
			d.fail(fmt.Errorf("cpu: Embed: token %d outside the table of %d rows", id, t.rows))
			return
		}
		if err := tensor.Dequantize(t.dt, ov[i*o.cols:(i+1)*o.cols], t.row(int(id))); err != nil {
			d.fail(fmt.Errorf("cpu: Embed: %w", err))
			return
		}
	}
}

// SetRows stores row i of src (n, cols) into row rows[i] of dst, converting to dst's
// type with tensor.Quantize (F16: round to nearest even, as ggml's set_rows).
func (d *Device) SetRows(dst, src, rows backend.Buffer) {
	o := d.arg("SetRows", "dst", dst)
	s := d.arg("SetRows", "src", src, tensor.F32)
	r := d.arg("SetRows", "rows", rows, tensor.I32)
	shape("SetRows", "rows", r, s.rows, 1)
	if s.cols != o.cols {
		panic(fmt.Sprintf("cpu: SetRows: src has %d columns, dst %d", s.cols, o.cols))
	}
	if !d.lock("SetRows") {
		return
	}
	defer d.mu.Unlock()
	o.dropPanels()
	sv := s.f32()
	for i, row := range r.i32() {
		if row < 0 || int(row) >= o.rows {
			d.fail(fmt.Errorf("cpu: SetRows: row %d outside a buffer of %d rows", row, o.rows))
			return
		}
		if o.dt == tensor.F16 {
			f32ToF16Row(uint16s(o.row(int(row))), sv[i*s.cols:(i+1)*s.cols])
			continue
		}
		if err := tensor.Quantize(o.dt, o.row(int(row)), sv[i*s.cols:(i+1)*s.cols]); err != nil {
			d.fail(fmt.Errorf("cpu: SetRows: %w", err))
			return
		}
	}
}

// f32ToF16Row sets dst[i] = tensor.F32ToF16(src[i]).
func f32ToF16Row(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if n8 := len(src) / 8; useAVX2 && n8 > 0 && !f32ToF16RowAVX2(&dst[0], &src[0], n8) {
		i = 8 * n8 // no NaN, whose bits F32ToF16 sets its own way
	}
	for ; i < len(src); i++ {
		dst[i] = toF16(src[i])
	}
}

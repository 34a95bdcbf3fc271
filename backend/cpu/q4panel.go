package cpu

import "github.com/infergo/infer/tensor"

// q40PanelTile returns the level's kernel over Q4_0 panels (tensor.Q4_0PanelTileFunc)
// where MatMul uses it for the weights b: a wrapped (fixed) Q4_0 matrix of whole
// panels; nil otherwise, and MatMul reads b's rows in place.
func q40PanelTile(b *Buffer) tensor.PanelTileFunc {
	if b.dt != tensor.Q4_0 || !b.fixed || b.rows%tensor.X86RepackRows != 0 || b.rows == 0 {
		return nil
	}
	return tensor.Q4_0PanelTileFunc()
}

// q40Panels returns b's weights in the panel layout, packing them over the pool at the
// first call. The caller holds d.mu.
func (d *Device) q40Panels(b *Buffer) []byte {
	if b.panels == nil {
		p := &panelTask{dst: weightMem(b, len(b.data)), src: b.data, cols: b.cols, pb: tensor.X86RepackRows * b.rowBytes()}
		d.pool.parallel(p, b.rows/tensor.X86RepackRows, 16)
		b.panels = p.dst
	}
	return b.panels
}

// panelTask packs panels [lo, hi) of src into dst.
type panelTask struct {
	dst, src []byte
	cols, pb int
}

func (t *panelTask) run(_, lo, hi int) {
	tensor.PackQ4_0Panels(t.dst[lo*t.pb:hi*t.pb], t.src[lo*t.pb:hi*t.pb], t.cols)
}

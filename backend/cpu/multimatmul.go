package cpu

import (
	"fmt"
	"runtime"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// maxProducts is the most products MultiMatMul runs in one parallel section (q, k
// and v); it runs longer lists, and batches of prompt rows, one MatMul each.
const maxProducts = 3

// multiMatMulTask is the dot pass of up to maxProducts MatMul tasks over one input, as
// one job: its units are those of t[0], then those of t[1], and so on, so that a
// chunk may span two products. Each unit is computed by its own product's task, the
// way MatMul computes it.
type multiMatMulTask struct {
	t   [maxProducts]matmulTask
	end [maxProducts]int // end[i]: the units of t[0..i]
	n   int              // products
}

func (m *multiMatMulTask) run(worker, lo, hi int) {
	for i := range m.n {
		if l, h := m.part(i, lo, hi); l < h {
			m.t[i].run(worker, l, h)
		}
	}
}

// part returns the units of product i in [lo, hi), counted in product i's own units:
// [l, h), empty when l ≥ h.
func (m *multiMatMulTask) part(i, lo, hi int) (l, h int) {
	start := 0
	if i > 0 {
		start = m.end[i-1]
	}
	return max(lo, start) - start, min(hi, m.end[i]) - start
}

var _ backend.MultiMatMuler = (*Device)(nil)

// MultiMatMul sets p[i].Dst = x · p[i].Wᵀ for every i, bit for bit as MatMul does. For
// a batch of fewer than tensor.X86RepackGemmRows rows (decoding) and up to maxProducts
// products it converts x once per weight type and runs the dot passes of all the
// products as one parallel section (multiMatMulTask), whose chunk count is the sum
// of theirs: a decoding step then pays one wake-up and one barrier for q, k and v,
// and the small k and v mat-vecs, which would each run on the caller alone, share the
// workers.
func (d *Device) MultiMatMul(x backend.Buffer, p []backend.Product) {
	xb := d.arg("MultiMatMul", "x", x, tensor.F32)
	if len(p) > maxProducts || xb.rows >= tensor.X86RepackGemmRows {
		for _, q := range p {
			d.MatMul(q.Dst, q.W, x)
		}
		return
	}
	var o, wb [maxProducts]*Buffer
	for i, q := range p {
		o[i], wb[i], _ = d.matMulArgs(q.Dst, q.W, x)
	}
	if !d.lock("MultiMatMul") {
		return
	}
	defer d.mu.Unlock()
	m := &d.mms
	if err := d.setupProducts(m, o[:len(p)], wb[:len(p)], xb); err != nil {
		d.fail(fmt.Errorf("cpu: MultiMatMul: %w", err))
		*m = multiMatMulTask{}
		return
	}
	units, chunks := 0, 0
	for i := range m.n {
		u, grain, _ := m.t[i].units()
		units += u
		chunks += u / grain
		m.end[i] = units
	}
	d.pool.parallelStream(m, units, units/max(chunks, 1))
	runtime.KeepAlive(&wb)
	*m = multiMatMulTask{}
}

// sameActivations reports whether a, set up over the same input as b, converts it to
// the same bytes: weights of one type (so one vec-dot type and quantizer, and one
// preparation where both prepare), rows of the same size (F16 rows widened for a tile
// or not) and both prepared or neither.
func sameActivations(a, b *matmulTask) bool {
	return a.wt == b.wt && a.quantize == b.quantize && a.xrb == b.xrb &&
		(a.prepared.Tile != nil) == (b.prepared.Tile != nil) && a.xprb == b.xprb
}

// setupProducts sets the tasks of m up for o[i] = xb · wb[i]ᵀ and converts xb for
// them: once per weight type, the products of a type already seen sharing the first
// one's activations.
func (d *Device) setupProducts(m *multiMatMulTask, o, wb []*Buffer, xb *Buffer) error {
	m.n = len(o)
	for i := range o {
		t := &m.t[i]
		if err := d.setupMatMul(t, i, o[i], wb[i], xb); err != nil {
			return err
		}
		for j := range i {
			if sameActivations(t, &m.t[j]) {
				t.xq, t.xp, t.quantize = m.t[j].xq, m.t[j].xp, false
				break
			}
		}
		d.quantizeMatMul(t)
	}
	return nil
}

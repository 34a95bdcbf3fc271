package cpu

// The row-wise elementwise kernels (Add, SwiGLU) as a pool task.

// minChunkElems is the least elements of a row-wise elementwise job (Add, SwiGLU, the
// quantization of MatMul's activations) worth a chunk of its own: about a microsecond
// of work, more than handing a chunk to a worker that is polling for one (as the
// workers are between the kernels of a forward pass) costs. minChunkWork, which counts
// a kernel's multiply-adds, would leave a 64-token prompt's rows to the caller alone.
const minChunkElems = 1 << 12

// rowsGrain is the grain (rows per chunk) of a row-wise job over rows of cols elements.
func rowsGrain(cols int) int { return max(1, minChunkElems/max(cols, 1)) }

// The operations of a rowsTask.
const (
	rowsAdd    = iota // dst += a, a one row or dst's shape
	rowsSwiGLU        // dst = silu(a) ⊙ b
)

// rowsTask runs a row-wise elementwise operation on rows [lo, hi) of dst (rows of cols).
type rowsTask struct {
	op   int
	dst  []float32
	a, b []float32
	cols int
}

func (t *rowsTask) run(_, lo, hi int) {
	c := t.cols
	for r := lo; r < hi; r++ {
		d := t.dst[r*c : (r+1)*c]
		switch t.op {
		case rowsAdd:
			addRow(d, t.a[(r*c)%len(t.a):][:c])
		case rowsSwiGLU:
			swigluRow(d, t.a[r*c:(r+1)*c], t.b[r*c:(r+1)*c])
		}
	}
}

// addRow sets dst[i] += x[i] (in assembly at the AVX-512 level).
func addRow(dst, x []float32) {
	x = x[:len(dst)]
	if hasAVX512 && len(dst) > 0 {
		addRowAVX512(&dst[0], &x[0], len(dst))
		return
	}
	addRowGo(dst, x)
}

// addRowGo is addRow without assembly.
func addRowGo(dst, x []float32) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] += v
	}
}

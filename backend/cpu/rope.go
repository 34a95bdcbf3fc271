package cpu

import (
	"fmt"
	"math"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// maxRopePairs bounds Rope.Dims/2 so that the per-row cos/sin cache lives on the stack.
const maxRopePairs = 512

// ropeTask rotates rows [lo, hi) of x in place.
type ropeTask struct {
	x       []float32 // (n, heads·headDim)
	pos     []int32   // (n)
	factors []float32 // (dims/2) or nil
	cols    int
	r       backend.Rope
}

func (t *ropeTask) run(_, lo, hi int) {
	var cs [2 * maxRopePairs]float32 // cos, sin per pair
	cache := cs[:t.r.Dims]
	thetaScale := ropeThetaScale(t.r)
	for i := lo; i < hi; i++ {
		ropeCache(cache, float32(t.pos[i]), thetaScale, t.r, t.factors)
		row := t.x[i*t.cols : (i+1)*t.cols]
		for h := 0; h+t.r.HeadDim <= t.cols; h += t.r.HeadDim {
			rotate(row[h:h+t.r.HeadDim], cache, t.r.NeoX)
		}
	}
}

// ropeThetaScale is base^(-2/dims) rounded to float32, ggml_rope's theta_scale.
func ropeThetaScale(r backend.Rope) float32 {
	return float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dims))))
}

// ropeCache fills cache with (cos θ, sin θ) per rotated pair at position pos, as
// ggml_rope_cache_init does in float32: θ starts at pos and is multiplied by
// thetaScale (ropeThetaScale) per pair, divided by the pair's frequency factor and
// multiplied by the frequency scale. YaRN's extrapolation mix and magnitude scale are
// not applied (ext_factor 0, attn_factor 1: llama.cpp's values for llama models
// without YaRN).
func ropeCache(cache []float32, pos, thetaScale float32, r backend.Rope, factors []float32) {
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	theta := pos
	for i := 0; i < r.Dims/2; i++ {
		ff := float32(1)
		if factors != nil {
			ff = factors[i]
		}
		th := scale * (theta / ff)
		cache[2*i] = cosf(th)
		cache[2*i+1] = sinf(th)
		theta *= thetaScale
	}
}

// rotate applies the cached rotation to one head: adjacent pairs (2i, 2i+1), or with
// neox the pairs (i, i+dims/2). Elements past the rotated dims are left as they are.
// The adjacent pairs go through assembly at the AVX-512 level.
func rotate(x, cache []float32, neox bool) {
	if hasAVX512 && !neox && len(cache) > 0 {
		_ = x[len(cache)-1]
		rotatePairsAVX512(&x[0], &cache[0], len(cache))
		return
	}
	rotateGo(x, cache, neox)
}

// rotateGo is rotate without assembly.
func rotateGo(x, cache []float32, neox bool) {
	half := len(cache) / 2
	for i := 0; i < half; i++ {
		c, s := cache[2*i], cache[2*i+1]
		a, b := 2*i, 2*i+1
		if neox {
			a, b = i, i+half
		}
		x0, x1 := x[a], x[b]
		// Each product rounded, as on amd64 (Go fuses a*b - c*d on arm64 otherwise).
		x[a] = float32(x0*c) - float32(x1*s)
		x[b] = float32(x0*s) + float32(x1*c)
	}
}

// RoPE rotates x (n, heads·headDim) in place, row i at position positions[i]. GGUF
// llama weights use adjacent pairs (r.NeoX false): rotating the wrong pairs gives a
// model that still runs but whose attention ignores relative positions.
func (d *Device) RoPE(x, positions backend.Buffer, r backend.Rope) {
	a := d.arg("RoPE", "x", x, tensor.F32)
	p := d.arg("RoPE", "positions", positions, tensor.I32)
	shape("RoPE", "positions", p, a.rows, 1)
	if r.HeadDim <= 0 || a.cols%r.HeadDim != 0 || r.Dims%2 != 0 || r.Dims > r.HeadDim || r.Dims/2 > maxRopePairs {
		panic(fmt.Sprintf("cpu: RoPE: %d columns with head dim %d, rotated dims %d", a.cols, r.HeadDim, r.Dims))
	}
	var factors []float32
	if r.Factors != nil {
		f := d.arg("RoPE", "factors", r.Factors, tensor.F32)
		if f.rows*f.cols < r.Dims/2 {
			panic(fmt.Sprintf("cpu: RoPE: %d frequency factors for %d dims", f.rows*f.cols, r.Dims))
		}
		factors = f.f32()
	}
	if !d.lock("RoPE") {
		return
	}
	defer d.mu.Unlock()
	d.rope = ropeTask{x: a.f32(), pos: p.i32(), factors: factors, cols: a.cols, r: r}
	d.pool.parallel(&d.rope, a.rows, 4)
	d.rope = ropeTask{}
}

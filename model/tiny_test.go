package model

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// tiny is a small llama written with the GGUF writer: dim 8, 2 layers, 2 query heads
// over 1 K/V head of 4, ff 16, vocab 11. Weights are random float32s kept here for the
// float64 reference forward pass.
type tiny struct {
	cfg     Config
	tensors map[string][]float32 // by GGUF name, row-major (rows, rowLen)
	dims    map[string][]uint64
	order   []string
}

func newTiny(seed uint64) *tiny { return newTinyArch(seed, "llama") }

// newTinyArch is newTiny for architecture arch: qwen2 adds q, k, v biases; qwen3 adds
// per-head q and k norms and has heads of 6 (q and the attention output are then 12
// wide, not dim 8). Both rotate NeoX pairs.
func newTinyArch(seed uint64, arch string) *tiny {
	m := &tiny{
		cfg: Config{Arch: arch, NVocab: 11, NCtxTrain: 32, NEmbd: 8, NLayer: 2, NHead: 2, NHeadKV: 1,
			HeadDim: 4, NFF: 16, RopeDims: 4, RopeBase: 10000, RopeScale: 1, NormEps: 1e-5, Block: architectures[arch]},
		tensors: map[string][]float32{}, dims: map[string][]uint64{},
	}
	if arch == "qwen3" {
		m.cfg.HeadDim, m.cfg.RopeDims = 6, 6
	}
	r := rand.New(rand.NewPCG(seed, 7))
	c := m.cfg
	add := func(name string, scale, offset float64, dims ...int) {
		n := 1
		d := make([]uint64, len(dims))
		for i, x := range dims {
			n *= x
			d[i] = uint64(x)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(offset + scale*r.NormFloat64())
		}
		m.tensors[name], m.dims[name] = v, d
		m.order = append(m.order, name)
	}
	add("token_embd.weight", 1, 0, c.NEmbd, c.NVocab)
	add("output_norm.weight", 0.1, 1, c.NEmbd)
	add("output.weight", 0.5, 0, c.NEmbd, c.NVocab)
	for l := 0; l < c.NLayer; l++ {
		p := "blk." + string(rune('0'+l)) + "."
		add(p+"attn_norm.weight", 0.1, 1, c.NEmbd)
		add(p+"attn_q.weight", 0.7, 0, c.NEmbd, c.QDim())
		add(p+"attn_k.weight", 0.7, 0, c.NEmbd, c.KVDim())
		add(p+"attn_v.weight", 0.5, 0, c.NEmbd, c.KVDim())
		add(p+"attn_output.weight", 0.5, 0, c.QDim(), c.NEmbd)
		add(p+"ffn_norm.weight", 0.1, 1, c.NEmbd)
		add(p+"ffn_gate.weight", 0.5, 0, c.NEmbd, c.NFF)
		add(p+"ffn_up.weight", 0.5, 0, c.NEmbd, c.NFF)
		add(p+"ffn_down.weight", 0.3, 0, c.NFF, c.NEmbd)
		if c.Block.QKVBias == Required {
			add(p+"attn_q.bias", 0.5, 0, c.QDim())
			add(p+"attn_k.bias", 0.5, 0, c.KVDim())
			add(p+"attn_v.bias", 0.5, 0, c.KVDim())
		}
		if c.Block.QKNorm == Required {
			add(p+"attn_q_norm.weight", 0.2, 1, c.HeadDim)
			add(p+"attn_k_norm.weight", 0.2, 1, c.HeadDim)
		}
	}
	return m
}

// writer returns a GGUF writer holding the model, with every tensor of type dt except
// the norms (F32); skip names tensors to leave out.
func (m *tiny) writer(t *testing.T, dt tensor.DType, skip ...string) *gguf.Writer {
	t.Helper()
	c := m.cfg
	w := gguf.NewWriter()
	a := c.Arch + "."
	w.Set("general.architecture", gguf.Str(c.Arch))
	w.Set(a+"context_length", gguf.Uint32(uint32(c.NCtxTrain)))
	w.Set(a+"embedding_length", gguf.Uint32(uint32(c.NEmbd)))
	w.Set(a+"block_count", gguf.Uint32(uint32(c.NLayer)))
	w.Set(a+"feed_forward_length", gguf.Uint32(uint32(c.NFF)))
	w.Set(a+"attention.head_count", gguf.Uint32(uint32(c.NHead)))
	w.Set(a+"attention.head_count_kv", gguf.Uint32(uint32(c.NHeadKV)))
	if c.HeadDim != c.NEmbd/c.NHead {
		w.Set(a+"attention.key_length", gguf.Uint32(uint32(c.HeadDim)))
		w.Set(a+"attention.value_length", gguf.Uint32(uint32(c.HeadDim)))
	}
	w.Set(a+"attention.layer_norm_rms_epsilon", gguf.Float32(c.NormEps))
	w.Set(a+"rope.freq_base", gguf.Float32(c.RopeBase))
next:
	for _, name := range m.order {
		for _, s := range skip {
			if s == name {
				continue next
			}
		}
		v, typ := m.tensors[name], dt
		if len(m.dims[name]) == 1 {
			typ = tensor.F32
		}
		b := make([]byte, typ.RowBytes(len(v)))
		if err := tensor.Quantize(typ, b, v); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensorBytes(name, typ, m.dims[name], b); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// file writes the model to a temporary file and returns its path.
func (m *tiny) file(t *testing.T, dt tensor.DType, skip ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := m.writer(t, dt, skip...).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// forward64 is the llama forward pass in float64 over the model's float32 weights, for
// tokens at positions 0.. : embed, per layer RMS norm, q k v (plus biases, then per-head
// norms, where the model has them), RoPE (adjacent or NeoX pairs), causal grouped-query
// softmax attention, output projection, RMS norm, SwiGLU
// feed-forward; final norm and output head. It returns (len(tokens), vocab) logits.
func (m *tiny) forward64(tokens []int32) []float64 {
	c := m.cfg
	w := func(name string) []float64 {
		v := make([]float64, len(m.tensors[name]))
		for i, x := range m.tensors[name] {
			v[i] = float64(x)
		}
		return v
	}
	n, dim := len(tokens), c.NEmbd
	x := make([][]float64, n)
	for i, tok := range tokens {
		x[i] = w("token_embd.weight")[int(tok)*dim : (int(tok)+1)*dim]
	}
	keys, vals := make([][]float64, n), make([][]float64, n)
	for l := 0; l < c.NLayer; l++ {
		p := "blk." + string(rune('0'+l)) + "."
		qs := make([][]float64, n)
		for i := range x {
			h := rmsNorm64(x[i], w(p+"attn_norm.weight"), float64(c.NormEps))
			q, k, v := matVec64(w(p+"attn_q.weight"), h), matVec64(w(p+"attn_k.weight"), h), matVec64(w(p+"attn_v.weight"), h)
			if _, ok := m.tensors[p+"attn_q.bias"]; ok {
				q, k, v = add64(q, w(p+"attn_q.bias")), add64(k, w(p+"attn_k.bias")), add64(v, w(p+"attn_v.bias"))
			}
			if c.Block.QKNorm == Required {
				q, k = headNorm64(q, w(p+"attn_q_norm.weight"), c), headNorm64(k, w(p+"attn_k_norm.weight"), c)
			}
			qs[i], keys[i], vals[i] = rope64(q, i, c), rope64(k, i, c), v
		}
		for i := range x {
			att := attend64(qs[i], keys[:i+1], vals[:i+1], c)
			x[i] = add64(x[i], matVec64(w(p+"attn_output.weight"), att))
			h := rmsNorm64(x[i], w(p+"ffn_norm.weight"), float64(c.NormEps))
			g, u := matVec64(w(p+"ffn_gate.weight"), h), matVec64(w(p+"ffn_up.weight"), h)
			for j := range g {
				g[j] = g[j] / (1 + math.Exp(-g[j])) * u[j]
			}
			x[i] = add64(x[i], matVec64(w(p+"ffn_down.weight"), g))
		}
	}
	var logits []float64
	for i := range x {
		logits = append(logits, matVec64(w("output.weight"), rmsNorm64(x[i], w("output_norm.weight"), float64(c.NormEps)))...)
	}
	return logits
}

func rmsNorm64(x, w []float64, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * s * w[i]
	}
	return y
}

// matVec64 is w·x for w of (len(w)/len(x), len(x)).
func matVec64(w, x []float64) []float64 {
	y := make([]float64, len(w)/len(x))
	for o := range y {
		for k, v := range x {
			y[o] += w[o*len(x)+k] * v
		}
	}
	return y
}

// headNorm64 is rmsNorm64 of every head of x.
func headNorm64(x, w []float64, c Config) []float64 {
	var y []float64
	for h := 0; h < len(x); h += c.HeadDim {
		y = append(y, rmsNorm64(x[h:h+c.HeadDim], w, float64(c.NormEps))...)
	}
	return y
}

// rope64 rotates the pairs (2k, 2k+1) of each head, or (k, k+RopeDims/2) for NeoX.
func rope64(x []float64, pos int, c Config) []float64 {
	for h := 0; h < len(x); h += c.HeadDim {
		for k := 0; k < c.RopeDims/2; k++ {
			theta := float64(pos) * math.Pow(float64(c.RopeBase), -2*float64(k)/float64(c.RopeDims))
			i, j := h+2*k, h+2*k+1
			if c.Block.RopeNeoX {
				i, j = h+k, h+k+c.RopeDims/2
			}
			a, b := x[i], x[j]
			x[i] = a*math.Cos(theta) - b*math.Sin(theta)
			x[j] = a*math.Sin(theta) + b*math.Cos(theta)
		}
	}
	return x
}

func attend64(q []float64, keys, vals [][]float64, c Config) []float64 {
	out := make([]float64, len(q))
	hd := c.HeadDim
	for h := 0; h < c.NHead; h++ {
		kv := h / (c.NHead / c.NHeadKV) * hd
		s := make([]float64, len(keys))
		m := math.Inf(-1)
		for j := range keys {
			for d := 0; d < hd; d++ {
				s[j] += q[h*hd+d] * keys[j][kv+d]
			}
			s[j] /= math.Sqrt(float64(hd))
			m = math.Max(m, s[j])
		}
		var sum float64
		for j := range s {
			s[j] = math.Exp(s[j] - m)
			sum += s[j]
		}
		for j := range s {
			for d := 0; d < hd; d++ {
				out[h*hd+d] += s[j] / sum * vals[j][kv+d]
			}
		}
	}
	return out
}

func add64(a, b []float64) []float64 {
	y := make([]float64, len(a))
	for i := range a {
		y[i] = a[i] + b[i]
	}
	return y
}

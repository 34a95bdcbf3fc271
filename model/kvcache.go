package model

import (
	"fmt"
	"strings"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// KVCacheType is the element type of the KV cache. The zero value is F16, llama.cpp's
// default, so Options{} behaves as llama.cpp does; F32 is exact and is what the
// tightest conformance tolerances are stated for.
type KVCacheType uint8

// The KV cache types.
const (
	KVCacheF16 KVCacheType = iota // half precision (llama.cpp's default)
	KVCacheF32                    // single precision
)

// DType is the tensor type of the cache's rows.
func (t KVCacheType) DType() tensor.DType {
	if t == KVCacheF32 {
		return tensor.F32
	}
	return tensor.F16
}

// String is "f16" or "f32", as the -ctk flag spells it.
func (t KVCacheType) String() string {
	switch t {
	case KVCacheF16:
		return "f16"
	case KVCacheF32:
		return "f32"
	}
	return fmt.Sprintf("KVCacheType(%d)", uint8(t))
}

// ParseKVCacheType parses "f16" or "f32" (any case).
func ParseKVCacheType(s string) (KVCacheType, error) {
	switch strings.ToLower(s) {
	case "f16":
		return KVCacheF16, nil
	case "f32":
		return KVCacheF32, nil
	}
	return 0, fmt.Errorf("model: KV cache type %q: want f16 or f32", s)
}

// KVCacheTypeOf returns the cache type of dt, which must be F16 or F32.
func KVCacheTypeOf(dt tensor.DType) (KVCacheType, error) {
	switch dt {
	case tensor.F16:
		return KVCacheF16, nil
	case tensor.F32:
		return KVCacheF32, nil
	}
	return 0, fmt.Errorf("model: KV cache type %v: want F16 or F32", dt)
}

// kvCache holds the keys and values of one stage's layers: cache row p is the token at
// position p, written by SetRows after RoPE and read by Attention. Rows past a
// session's position are never read, so Reset need not clear them.
type kvCache struct {
	k, v []backend.Buffer // per layer of the stage (ctx, kvDim) of dt
	dt   tensor.DType
}

// newKVCache allocates layers × 2 buffers of ctx rows of kvDim elements of t on d.
func newKVCache(d backend.Device, layers, ctx, kvDim int, t KVCacheType) (*kvCache, error) {
	if t != KVCacheF16 && t != KVCacheF32 {
		return nil, fmt.Errorf("KV cache type %v: want F16 or F32", t)
	}
	dt := t.DType()
	c := &kvCache{k: make([]backend.Buffer, 0, layers), v: make([]backend.Buffer, 0, layers), dt: dt}
	for l := 0; l < layers; l++ {
		k, err := d.Alloc(dt, ctx, kvDim)
		if err != nil {
			c.free(d)
			return nil, fmt.Errorf("KV cache layer %d on %s: %w", l, d.Name(), err)
		}
		c.k = append(c.k, k)
		v, err := d.Alloc(dt, ctx, kvDim)
		if err != nil {
			c.free(d)
			return nil, fmt.Errorf("KV cache layer %d on %s: %w", l, d.Name(), err)
		}
		c.v = append(c.v, v)
	}
	return c, nil
}

// free releases the cache's buffers.
func (c *kvCache) free(d backend.Device) {
	for _, b := range append(c.k, c.v...) {
		d.Free(b)
	}
	c.k, c.v = nil, nil
}

package model

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// kvCache holds every layer's keys and values: cache row p is the token at position p,
// written by SetRows after RoPE and read by Attention. Rows past a session's position
// are never read, so Reset need not clear them.
type kvCache struct {
	k, v []backend.Buffer // per layer (ctx, kvDim) of dt
	dt   tensor.DType
}

// newKVCache allocates layers × 2 buffers of ctx rows of kvDim elements of dt.
func newKVCache(d backend.Device, layers, ctx, kvDim int, dt tensor.DType) (*kvCache, error) {
	if dt != tensor.F32 && dt != tensor.F16 {
		return nil, fmt.Errorf("KV cache type %v: want F16 or F32", dt)
	}
	c := &kvCache{k: make([]backend.Buffer, 0, layers), v: make([]backend.Buffer, 0, layers), dt: dt}
	for l := 0; l < layers; l++ {
		k, err := d.Alloc(dt, ctx, kvDim)
		if err != nil {
			c.free(d)
			return nil, fmt.Errorf("KV cache layer %d: %w", l, err)
		}
		c.k = append(c.k, k)
		v, err := d.Alloc(dt, ctx, kvDim)
		if err != nil {
			c.free(d)
			return nil, fmt.Errorf("KV cache layer %d: %w", l, err)
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

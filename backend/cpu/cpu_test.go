package cpu_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/backendtest"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/tensor"
)

func newDevice(threads int) func(t *testing.T) backend.Device {
	return func(t *testing.T) backend.Device {
		d := cpu.New(threads)
		t.Cleanup(func() { d.Close() })
		return d
	}
}

func TestConformance(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			backendtest.Run(t, newDevice(threads))
		})
	}
}

// TestErrors checks that data-dependent failures are kept and reported by Sync.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		run  func(d *cpu.Device, f32 func(r, c int) backend.Buffer, i32 func(v ...int32) backend.Buffer)
		want string
	}{
		{"token out of range", func(d *cpu.Device, f32 func(r, c int) backend.Buffer, i32 func(...int32) backend.Buffer) {
			d.Embed(f32(1, 4), f32(3, 4), i32(3))
		}, "token 3"},
		{"row out of range", func(d *cpu.Device, f32 func(r, c int) backend.Buffer, i32 func(...int32) backend.Buffer) {
			d.SetRows(f32(2, 4), f32(1, 4), i32(-1))
		}, "row -1"},
		{"position past the cache", func(d *cpu.Device, f32 func(r, c int) backend.Buffer, i32 func(...int32) backend.Buffer) {
			d.Attention(f32(1, 4), f32(1, 4), f32(2, 4), f32(2, 4), i32(2), backend.Attention{Heads: 1, KVHeads: 1, HeadDim: 4, Scale: 1})
		}, "position 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := cpu.New(2)
			defer d.Close()
			f32 := func(r, c int) backend.Buffer { b, _ := d.Alloc(tensor.F32, r, c); return b }
			i32 := func(v ...int32) backend.Buffer {
				raw := make([]byte, 4*len(v))
				for i, x := range v {
					binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
				}
				b, _ := d.Wrap(tensor.I32, len(v), 1, raw)
				return b
			}
			tt.run(d, f32, i32)
			err := d.Sync()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Sync() = %v, want an error mentioning %q", err, tt.want)
			}
			d.Add(f32(1, 1), f32(1, 1))
			if err2 := d.Sync(); err2 != err {
				t.Fatalf("Sync after a later kernel = %v, want the first failure %v", err2, err)
			}
		})
	}
}

// TestPanics checks that shape mismatches are programmer errors with a "cpu:" prefix.
func TestPanics(t *testing.T) {
	d := cpu.New(1)
	defer d.Close()
	a, _ := d.Alloc(tensor.F32, 2, 4)
	b, _ := d.Alloc(tensor.F32, 2, 5)
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.HasPrefix(s, "cpu: Add") {
			t.Fatalf("recover() = %v, want a cpu: Add panic", r)
		}
	}()
	d.Add(a, b)
}

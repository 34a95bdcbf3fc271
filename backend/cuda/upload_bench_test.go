//go:build cgo

package cuda

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/infergo/infer/tensor"
)

// BenchmarkUpload uploads 504 MiB as a model load does, tensor by tensor (here rows of
// 24 MiB), from the Go heap (touched) and from a freshly mapped file in the page cache
// (every page faulted in by the copy, as the weights of a GGUF file are).
func BenchmarkUpload(b *testing.B) {
	d := openTest(b)
	const rows, piece = 21, 24 << 20
	const total = rows * piece
	buf, err := d.Alloc(tensor.F32, rows, piece/4)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(buf)
	heap := make([]byte, total)
	for i := range heap {
		heap[i] = byte(i)
	}
	path := filepath.Join(b.TempDir(), "weights")
	if err := os.WriteFile(path, heap, 0o600); err != nil {
		b.Fatal(err)
	}
	upload := func(b *testing.B, src []byte) {
		for r := range rows {
			if err := d.Upload(buf.Slice(r, 1), src[r*piece:(r+1)*piece]); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("heap", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			upload(b, heap)
		}
	})
	b.Run("mmap", func(b *testing.B) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.SetBytes(total)
		for range b.N {
			b.StopTimer()
			m, err := syscall.Mmap(int(f.Fd()), 0, total, syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			upload(b, m)
			b.StopTimer()
			syscall.Munmap(m)
			b.StartTimer()
		}
	})
}

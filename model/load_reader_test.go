package model

import (
	"io"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
)

// readerDev is a CPU device that also takes weights from the file (backend.ReaderUploader),
// as the CUDA device does; it hides the CPU device's other upgrades (Wrap) by embedding
// only the interface. It counts the sections and the plain uploads it is given.
type readerDev struct {
	backend.Device
	sections, uploads int
	read              int64
}

func (d *readerDev) UploadFrom(dst backend.Buffer, src *io.SectionReader) error {
	raw := make([]byte, src.Size())
	if _, err := src.ReadAt(raw, 0); err != nil {
		return err
	}
	d.sections++
	d.read += src.Size()
	return d.Device.Upload(dst, raw)
}

func (d *readerDev) Upload(dst backend.Buffer, src []byte) error {
	d.uploads++
	return d.Device.Upload(dst, src)
}

// TestLoadReadsFile loads a model onto a device that reads weights from the file: every
// tensor reaches it through UploadFrom (none through Upload), the sections add up to the
// file's tensor data, and the model computes the same logits, bit for bit, as from the
// mapping (gguf's TestTensorSection checks each section's bytes).
func TestLoadReadsFile(t *testing.T) {
	path := testdata.Path(t, "stories260K-Q4_0.gguf")
	prompt := []int32{1, 403, 407, 261}
	plain := cpu.New(1) // behind the interface alone: neither Wrap nor UploadFrom
	defer plain.Close()
	want, _ := evalSteps(t, path, Options{Devices: []backend.Device{struct{ backend.Device }{plain}}, KVType: KVCacheF32}, prompt)

	d := &readerDev{Device: cpu.New(1)}
	defer d.Close()
	m, err := Load(path, Options{Devices: []backend.Device{d}, KVType: KVCacheF32})
	if err != nil {
		t.Fatal(err)
	}
	loaded := *d
	m.Close()
	if loaded.uploads != 0 || loaded.sections == 0 {
		t.Fatalf("Load: %d sections read from the file, %d plain uploads; want every tensor from the file", loaded.sections, loaded.uploads)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total int64
	for _, ti := range f.Tensors {
		total += int64(ti.Bytes())
	}
	if loaded.read != total {
		t.Fatalf("Load read %d bytes of sections, want the file's %d bytes of tensors", loaded.read, total)
	}
	got, _ := evalSteps(t, path, Options{Devices: []backend.Device{d}, KVType: KVCacheF32}, prompt)
	if i := sameBits(got, want); i >= 0 {
		t.Fatalf("logit %d: weights read from the file %g, from the mapping %g", i, got[i], want[i])
	}
}

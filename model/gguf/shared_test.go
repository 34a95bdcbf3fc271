package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

// sharedFiles lists every .gguf in the shared test data, stopping t (testdata.Missing)
// when there is none.
func sharedFiles(t *testing.T) []string {
	dir := testdata.Dir(t)
	top, _ := filepath.Glob(filepath.Join(dir, "*.gguf"))
	vocab, _ := filepath.Glob(filepath.Join(dir, "vocab", "*.gguf"))
	files := append(top, vocab...)
	if len(files) == 0 {
		testdata.Missing(t, "no .gguf files in %s", dir)
	}
	return files
}

// TestSharedFilesOpen opens every shared model and checks its directory against the
// tensor counts llama.cpp reported (reference.json) and the data against the file size.
func TestSharedFilesOpen(t *testing.T) {
	ref := testdata.LoadReference(t)
	want := map[string]int{}
	for _, m := range ref.Models {
		want[m.File] = len(m.TensorTypes)
	}
	for _, path := range sharedFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if n, ok := want[filepath.Base(path)]; ok && len(f.Tensors) != n {
				t.Errorf("%d tensors, reference.json lists %d", len(f.Tensors), n)
			}
			if f.Version != 3 || f.Arch() == "" {
				t.Errorf("version %d, arch %q", f.Version, f.Arch())
			}
			checkTensors(t, f)
		})
	}
}

// checkTensors checks each tensor's data is in bounds and typed as reference.json says.
func checkTensors(t *testing.T, f *File) {
	t.Helper()
	end := f.DataOffset
	for _, ti := range f.Tensors {
		data := f.TensorData(ti)
		if data == nil || uint64(len(data)) != ti.Bytes() {
			t.Fatalf("%s: data %d bytes, want %d", ti.Name, len(data), ti.Bytes())
		}
		end = max(end, f.DataOffset+int64(ti.Offset+ti.Bytes()))
	}
	if len(f.Tensors) > 0 && pad(end, int64(f.Alignment)) != f.Size() {
		t.Errorf("data ends at %d (padded %d), file size %d", end, pad(end, int64(f.Alignment)), f.Size())
	}
}

// TestSharedTensorTypes checks every tensor's type against reference.json.
func TestSharedTensorTypes(t *testing.T) {
	ref := testdata.LoadReference(t)
	for _, m := range ref.Models {
		f, err := Open(testdata.Path(t, m.File))
		if err != nil {
			t.Fatal(err)
		}
		for name, typ := range m.TensorTypes {
			ti, ok := f.Tensor(name)
			if !ok || !strings.EqualFold(ti.Type.String(), typ) {
				t.Errorf("%s: %s: type %v (found %v), want %s", m.File, name, ti.Type, ok, typ)
			}
		}
		f.Close()
	}
}

// TestRewriteIdentical reads each shared file (written by gguf-py or llama.cpp), writes
// it back with the same metadata and tensors, and expects the same bytes.
func TestRewriteIdentical(t *testing.T) {
	for _, path := range sharedFiles(t) {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(want)
		if err != nil {
			t.Fatal(err)
		}
		got := rewrite(t, f)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: rewrite differs: %d bytes, want %d; first difference at %d",
				filepath.Base(path), len(got), len(want), firstDiff(got, want))
		}
	}
}

// firstDiff returns the index of the first byte where a and b differ, or the shorter length.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/backend/cuda/kernels"
)

// TestModulesFromFatbin loads every kernel module the way Open does and checks that
// each came from its embedded fatbin, not from JIT-compiled PTX: Open on a fresh
// machine then takes no compilation time (issue 16). Open itself (openTest) resolves
// every kernel of kernelTable in those modules.
func TestModulesFromFatbin(t *testing.T) {
	if os.Getenv(KernelDirEnv) != "" || *ptxDir != "" {
		t.Skipf("kernels loaded from a directory (%s or -cuda.ptx), not the embedded fatbins", KernelDirEnv)
	}
	var mods []string
	fresh := 0
	for _, k := range kernelTable() {
		if !slices.Contains(mods, k.module) {
			mods = append(mods, k.module)
			if ptx, err := kernels.PTX(k.module); err == nil && fatbinFor(k.module, ptx) != nil {
				fresh++
			}
		}
	}
	if fresh == 0 {
		t.Skip("cuda: no fatbin committed yet: every module is JIT-compiled from its PTX; run make kernels where nvcc is")
	}
	d := openTest(t)
	cc := d.info.Major*10 + d.info.Minor
	for _, mod := range mods {
		err := d.do(func() error {
			m, fromFatbin, err := loadModule(embeddedPTX, mod)
			if err != nil {
				return err
			}
			if !fromFatbin {
				t.Errorf("module %s: loaded from PTX (JIT), not from its fatbin", mod)
			}
			return unloadModule(m)
		})
		if err != nil {
			t.Fatalf("module %s on sm_%d: %v", mod, cc, err)
		}
	}
	if !slices.Contains([]int{80, 86, 89, 90}, cc) {
		t.Logf("sm_%d: no machine code in the fatbins for this GPU; the driver JIT-compiled their PTX", cc)
	}
}

// TestStalePTXLoadsFromPTX checks the fallback: PTX other than the fatbins' (a test's
// freshly compiled kernels, or PTX changed without rebuilding the fatbin) is loaded
// and JIT-compiled itself.
func TestStalePTXLoadsFromPTX(t *testing.T) {
	d := openTest(t)
	stale := func(m string) ([]byte, error) {
		b, err := kernels.PTX(m)
		return append(b[:len(b):len(b)], "\n// changed\n"...), err
	}
	err := d.do(func() error {
		m, fromFatbin, err := loadModule(stale, "setrows")
		if err != nil {
			return err
		}
		if fromFatbin {
			t.Error("changed PTX: loaded from the fatbin built from the old PTX")
		}
		return unloadModule(m)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKernelDir checks $INFER_CUDA_KERNELS: PTX and fatbins read from that directory,
// laid out as backend/cuda/kernels, the fatbin only for the PTX it was built from.
func TestKernelDir(t *testing.T) {
	dir := t.TempDir()
	ptx := []byte(".version 9.0\n.target sm_80\n")
	sum := sha256.Sum256(ptx)
	for name, data := range map[string][]byte{
		"x.ptx":                  ptx,
		"fatbin/x.fatbin":        []byte("FATBIN"),
		"fatbin/x.fatbin.sha256": []byte(hex.EncodeToString(sum[:]) + "  x.ptx\n"),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(KernelDirEnv, dir)
	got, err := embeddedPTX("x")
	if err != nil || string(got) != string(ptx) {
		t.Fatalf("embeddedPTX(x) = %q, %v; want the directory's PTX", got, err)
	}
	if fb := fatbinFor("x", got); string(fb) != "FATBIN" {
		t.Errorf("fatbinFor(x) = %q, want the directory's fatbin", fb)
	}
	if fb := fatbinFor("x", append(got, '\n')); fb != nil {
		t.Errorf("fatbinFor(x, other PTX) = %q, want none", fb)
	}
	if _, err := embeddedPTX("norm"); err == nil || !strings.Contains(err.Error(), KernelDirEnv) {
		t.Errorf("embeddedPTX(norm) with no norm.ptx in the directory: %v", err)
	}
}

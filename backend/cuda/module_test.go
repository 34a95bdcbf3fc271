//go:build cgo

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	if *ptxDir != "" {
		t.Skip("kernels loaded from a directory (-cuda.ptx), not the embedded fatbins")
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
		if mod == wgModule && !d.wgCapable(true) {
			continue // sm_90a code: loaded on compute capability 9.0 only
		}
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
	stale := func(m string) ([]byte, []byte, error) {
		b, err := kernels.PTX(m)
		b = append(b[:len(b):len(b)], "\n// changed\n"...)
		return b, fatbinFor(m, b), err
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

// TestKernelDir checks kernels read from a directory (Options.KernelDir, OpenPTXDir):
// the directory's PTX, and fatbins there only for the PTX they were built from.
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
	got, fb, err := dirPTX(dir)("x")
	if err != nil || string(got) != string(ptx) || string(fb) != "FATBIN" {
		t.Fatalf("dirPTX(x) = %q, %q, %v; want the directory's PTX and fatbin", got, fb, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.ptx"), append(ptx, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, fb, err := dirPTX(dir)("x"); err != nil || fb != nil {
		t.Errorf("dirPTX(x) with PTX other than the fatbin's = %q, %q, %v; want the PTX alone", got, fb, err)
	}
	if b, err := kernels.FatbinIn(os.DirFS(filepath.Join(dir, "fatbin")), "x", append(ptx, '\n')); !errors.Is(err, kernels.ErrNoFatbin) {
		t.Errorf("FatbinIn(x, other PTX) = %q, %v; want ErrNoFatbin", b, err)
	}
	if _, _, err := dirPTX(dir)("norm"); err == nil || !strings.Contains(err.Error(), "norm.ptx") {
		t.Errorf("dirPTX(norm) with no norm.ptx in the directory: %v", err)
	}
}

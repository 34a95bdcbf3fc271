package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// modules lists the kernel modules: every committed .ptx.
func modules(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(files, "*.ptx")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded PTX: %v", err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".ptx")
	}
	return names
}

// requireFatbins skips t while no fatbin is committed at all (every module is then
// JIT-compiled from its PTX, as before fatbins existed; `make kernels` on a machine
// with nvcc builds them).
func requireFatbins(t *testing.T) {
	t.Helper()
	if names, _ := fs.Glob(fatbins, "*.fatbin"); len(names) == 0 {
		t.Skip("kernels: no fatbin committed yet: every module is JIT-compiled at the first Open; run make kernels where nvcc is")
	}
}

// TestFatbinsFresh checks that every module has a fatbin built from its committed PTX
// once any has: a change to a kernel that regenerated the PTX but not the fatbin fails
// here (the device would fall back to JIT-compiling the PTX).
func TestFatbinsFresh(t *testing.T) {
	requireFatbins(t)
	for _, m := range modules(t) {
		ptx, err := PTX(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fatbin(m, ptx); err != nil {
			t.Errorf("%v (run make kernels on a machine with nvcc)", err)
		}
	}
}

// sm90aModules are the modules of Hopper-only code (SM90A_MODULES of the Makefile).
var sm90aModules = []string{"wgmma"}

// TestFatbinArchs checks what each fatbin holds: machine code for sm_80, sm_86, sm_89
// and sm_90, and the compute_80 PTX for newer GPUs; for the Hopper-only modules, sm_90a
// machine code and its compute_90a PTX alone.
func TestFatbinArchs(t *testing.T) {
	requireFatbins(t)
	for _, m := range modules(t) {
		b, err := fs.ReadFile(fatbins, m+".fatbin")
		if err != nil {
			t.Fatal(err)
		}
		elf, ptx, err := fatbinEntries(b)
		if err != nil {
			t.Errorf("%s.fatbin: %v", m, err)
			continue
		}
		slices.Sort(elf)
		if slices.Contains(sm90aModules, m) {
			if !slices.Equal(elf, []int{90}) || !slices.Equal(ptx, []int{90}) {
				t.Errorf("%s.fatbin: machine code for sm %v and PTX for compute %v; want sm [90] and compute [90] (90a)", m, elf, ptx)
			}
			continue
		}
		if !slices.Equal(elf, []int{80, 86, 89, 90}) || !slices.Equal(ptx, []int{80}) {
			t.Errorf("%s.fatbin: machine code for sm %v and PTX for compute %v; want sm [80 86 89 90] and compute [80]", m, elf, ptx)
		}
	}
}

// fatbinEntries lists the architectures of the machine code (ELF) and PTX entries of a
// fatbin: a 16-byte header (magic 0xBA55ED50, version 1, header size, size of what
// follows), then entries, each a header (kind at 0: 1 PTX, 2 or 0x10 ELF; its size at
// 4; the payload's, padded to 8 bytes, at 8; the architecture at 28) and its payload.
// The layout is NVIDIA's, undocumented; this follows what cuobjdump is known to read.
func fatbinEntries(b []byte) (elf, ptx []int, err error) {
	le := binary.LittleEndian
	if len(b) < 16 || le.Uint32(b) != 0xBA55ED50 || le.Uint16(b[4:]) != 1 {
		return nil, nil, errors.New("not a fatbin")
	}
	off, end := int(le.Uint16(b[6:])), int(le.Uint16(b[6:]))+int(le.Uint64(b[8:]))
	if end != len(b) {
		return nil, nil, fmt.Errorf("header says %d bytes, file has %d", end, len(b))
	}
	for off < end {
		if end-off < 32 {
			return nil, nil, fmt.Errorf("entry at %d: truncated", off)
		}
		e := b[off:]
		kind, hsize, psize, arch := le.Uint16(e), int(le.Uint32(e[4:])), int(le.Uint64(e[8:])), int(le.Uint32(e[28:]))
		switch kind {
		case 1:
			ptx = append(ptx, arch)
		case 2, 0x10:
			elf = append(elf, arch)
		}
		if hsize < 32 || psize < 0 || off+hsize+psize > end {
			return nil, nil, fmt.Errorf("entry at %d: header %d, payload %d bytes past the end", off, hsize, psize)
		}
		off += hsize + psize
	}
	return elf, ptx, nil
}

// TestFatbinEntries checks the reader of fatbin headers on a fatbin laid out by hand.
func TestFatbinEntries(t *testing.T) {
	le := binary.LittleEndian
	entry := func(kind uint16, arch uint32, payload int) []byte {
		e := make([]byte, 64+payload)
		le.PutUint16(e, kind)
		le.PutUint32(e[4:], 64)
		le.PutUint64(e[8:], uint64(payload))
		le.PutUint32(e[28:], arch)
		return e
	}
	var body []byte
	for _, e := range [][]byte{entry(2, 80, 16), entry(2, 90, 8), entry(1, 80, 24), entry(0x10, 86, 0)} {
		body = append(body, e...)
	}
	head := make([]byte, 16)
	le.PutUint32(head, 0xBA55ED50)
	le.PutUint16(head[4:], 1)
	le.PutUint16(head[6:], 16)
	le.PutUint64(head[8:], uint64(len(body)))
	elf, ptx, err := fatbinEntries(append(head, body...))
	if err != nil || !slices.Equal(elf, []int{80, 90, 86}) || !slices.Equal(ptx, []int{80}) {
		t.Errorf("fatbinEntries = %v, %v, %v; want [80 90 86] [80]", elf, ptx, err)
	}
	if _, _, err := fatbinEntries(append(head, body[:100]...)); err == nil {
		t.Error("truncated fatbin: no error")
	}
	if _, _, err := fatbinEntries([]byte(".version 9.0")); err == nil {
		t.Error("PTX text: no error")
	}
}

// TestFatbinIn checks that a fatbin is returned only for the PTX it was built from.
func TestFatbinIn(t *testing.T) {
	ptx := []byte(".version 9.0\n.target sm_80\n")
	sum := sha256.Sum256(ptx)
	fsys := fstest.MapFS{
		"m.fatbin":            {Data: []byte("FATBIN")},
		"m.fatbin.sha256":     {Data: []byte(hex.EncodeToString(sum[:]) + "  m.ptx\n")},
		"bad.fatbin":          {Data: []byte("FATBIN")},
		"bad.fatbin.sha256":   {Data: []byte("zz  bad.ptx\n")},
		"nobin.fatbin.sha256": {Data: []byte(hex.EncodeToString(sum[:]) + "  nobin.ptx\n")},
	}
	if b, err := FatbinIn(fsys, "m", ptx); err != nil || string(b) != "FATBIN" {
		t.Errorf("FatbinIn(matching PTX) = %q, %v", b, err)
	}
	for _, tt := range []struct {
		module string
		ptx    []byte
	}{
		{"m", append(ptx, '\n')}, // the PTX changed since the fatbin was built
		{"bad", ptx},             // no sha256 recorded
		{"nobin", ptx},           // no fatbin beside the sum
		{"none", ptx},            // no fatbin at all
	} {
		if b, err := FatbinIn(fsys, tt.module, tt.ptx); !errors.Is(err, ErrNoFatbin) || b != nil {
			t.Errorf("FatbinIn(%s) = %q, %v; want ErrNoFatbin", tt.module, b, err)
		}
	}
}

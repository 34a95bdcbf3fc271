package gguf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenErrors checks that Open's errors name the file and, for malformed input, the
// offset and the field.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("GGUF\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(dir, "missing.gguf"), "no such file"},
		{empty, "empty.gguf: gguf: offset 0x0: truncated: magic needs 4 bytes, 0 remain"},
		{bad, "bad.gguf: gguf: offset 0x4: unsupported version 1"},
	}
	for _, tt := range tests {
		f, err := Open(tt.path)
		if f != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) = %v, %v; want error %q", tt.path, f, err, tt.want)
		}
	}
}

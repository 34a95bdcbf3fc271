package dist

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// headerBytes is how much of a model file FileCheck hashes: the GGUF header (metadata
// and tensor table) of every model we know fits, and reading it is cheap.
const headerBytes = 4 << 20

// FileID identifies a model file well enough to tell two ranks loaded different ones:
// its size and the SHA-256 of its first 4 MiB (the GGUF header and tensor table).
type FileID struct {
	Size       int64  `json:"size"`
	HeaderHash string `json:"header_sha256"`
}

// FileCheck returns the FileID of the file at path.
func FileCheck(path string) (FileID, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileID{}, fmt.Errorf("dist: model file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return FileID{}, fmt.Errorf("dist: model file: %w", err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, headerBytes)); err != nil {
		return FileID{}, fmt.Errorf("dist: model file %s: %w", path, err)
	}
	return FileID{Size: st.Size(), HeaderHash: hex.EncodeToString(h.Sum(nil))}, nil
}

// String is "N bytes, header sha256 XXXXXXXXXXXX…".
func (id FileID) String() string {
	h := id.HeaderHash
	if len(h) > 12 {
		h = h[:12] + "…"
	}
	return fmt.Sprintf("%d bytes, header sha256 %s", id.Size, h)
}

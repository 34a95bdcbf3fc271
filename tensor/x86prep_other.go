//go:build !amd64

package tensor

// X86PreparedTileFunc reports false off amd64: its tiles prepare no activation rows.
func X86PreparedTileFunc(t DType, n, mx int) (X86PreparedTile, bool) {
	return X86PreparedTile{}, false
}

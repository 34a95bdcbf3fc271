package tensor

// The Q8_0 lane kernels on ZMM registers (zmm_q8_0_amd64.s): q80TileR2X4VNNI and
// q80TileR4X1VNNI with two weight rows to a register, over the activation rows that
// q80XPrepVNNI and q81XPrepVNNI prepare; the same bits (dotQ8_0x86Go's).

//go:noescape
func q80TileR2X4ZMM(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)

//go:noescape
func q80TileR2X8ZMM(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)

//go:noescape
func q80TileR4X1ZMM(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)

// q80KernelsZMM returns the Q8_0 lane kernels with the ZMM tiles (AVX512-VNNI).
func q80KernelsZMM() q80Kernels {
	return q80Kernels{q80XPrepVNNI, q81XPrepVNNI, q80TileR2X4ZMM, q80TileR4X1ZMM, nil, q80TileR2X8ZMM}
}

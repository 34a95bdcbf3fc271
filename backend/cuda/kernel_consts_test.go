//go:build cgo

package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/infergo/infer/tensor"
)

// kernelDefines returns the integer #defines of kernels/<file> (the default of one under
// #ifndef included), by name.
func kernelDefines(t *testing.T, file string) map[string]int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("kernels", file))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define (\w+) (\d+)\b`).FindAllSubmatch(src, -1) {
		v, err := strconv.Atoi(string(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		defs[string(m[1])] = v
	}
	return defs
}

// TestKernelConstants checks the launch shapes and limits the Go side assumes against
// the #defines of the kernel sources, without a GPU: a kernel rebuilt with other values
// would otherwise be launched with the old ones.
func TestKernelConstants(t *testing.T) {
	warp := kernelDefines(t, "common.cuh")["WARP"]
	att, mv, mmq := kernelDefines(t, "attention.cu"), kernelDefines(t, "matvec.cu"), kernelDefines(t, "mmq.cu")
	rope, wg := kernelDefines(t, "rope.cu"), kernelDefines(t, "wgmma.cu")
	for _, c := range []struct {
		name       string
		got, want  int
		kernelSide string
	}{
		{"attentionThreads", attentionThreads, att["ATT_WARPS"] * warp, "ATT_WARPS·WARP"},
		{"maxHeadDim", maxHeadDim, att["ATT_MAX_DIM"], "ATT_MAX_DIM"},
		{"maxSplits", maxSplits, att["ATT_MAX_SPLITS"], "ATT_MAX_SPLITS"},
		{"flashThreads", flashThreads, att["FA_WARPS"] * warp, "FA_WARPS·WARP"},
		{"flashRows", flashRows, att["FA_WARPS"] * 16, "FA_ROWS (16·FA_WARPS)"},
		{"flashKeys", flashKeys, att["FA_KEYS"], "FA_KEYS"},
		{"flashStages", flashStages, att["FA_STAGES"], "FA_STAGES"},
		{"flashPad", flashPad, att["FA_PAD"], "FA_PAD"},
		{"mvWarps", mvWarps, mv["MV_WARPS"], "MV_WARPS"},
		{"mvRows(Q4_0, 1)", mvRows(tensor.Q4_0, 1), mv["MV_ROWS_1"], "MV_ROWS_1"},
		{"mvRows(Q4_0, 2)", mvRows(tensor.Q4_0, 2), mv["MV_ROWS_2"], "MV_ROWS_2"},
		{"mmqRows", mmqRows, mmq["MMQ_BM"], "MMQ_BM"},
		{"mmqStage", mmqStage, mmq["MMQ_KT"], "MMQ_KT"},
		{"mmqStride", mmqStride, mmq["MMQ_KT"] + 16, "MMQ_STRIDE (MMQ_KT + 16)"},
		{"mmqThreads", mmqThreads, mmq["MMQ_THREADS"], "MMQ_THREADS"},
		{"ropeTable", ropeTable, rope["ROPE_TABLE"], "ROPE_TABLE"},
		{"wgRows", wgRows, wg["WG_BM"], "WG_BM"},
		{"wgTokens", wgTokens, wg["WG_BN"], "WG_BN"},
		{"wgStage", wgStage, wg["WG_BK"], "WG_BK"},
		{"wgThreads", wgThreads, wg["WG_THREADS"], "WG_THREADS"},
	} {
		if c.got != c.want || c.want == 0 {
			t.Errorf("%s = %d, the kernels' %s = %d (0: not found)", c.name, c.got, c.kernelSide, c.want)
		}
	}
}

// TestDecodeSplits checks the split policy of decode attention: one split per splitKeys
// rows of capacity, at least one per splitMinKeys rows up to splitMin, at most maxSplits.
func TestDecodeSplits(t *testing.T) {
	for _, c := range []struct{ ctx, keys, want int }{
		{1, splitKeys, 1},
		{128, splitKeys, 1},
		{129, splitKeys, 2},
		{256, splitKeys, 2},
		{257, splitKeys, 3},
		{512, splitKeys, 4},
		{2048, splitKeys, 4},
		{2049, splitKeys, 5},
		{4096, splitKeys, 8},
		{131072, splitKeys, 256},
		{1 << 20, splitKeys, 256},
		{1500, 64, 24},
		{1500, 1024, 4},
		{100, 64, 2},
	} {
		if got := decodeSplits(c.ctx, c.keys); got != c.want {
			t.Errorf("decodeSplits(%d, %d) = %d, want %d", c.ctx, c.keys, got, c.want)
		}
	}
}

// TestGQASplits checks the K/V-head kernels' split policy: decodeSplits' splits, g times
// as many for blocks of g query heads, and warps of at least the policy's warpKeys / g
// keys, and at least gqaWarpKeys unless warpKeys is fewer.
func TestGQASplits(t *testing.T) {
	for _, c := range []struct{ ctx, g, keys, warpKeys, splits, minKeys int }{
		{128, 1, splitKeys, warpMinKeys, 1, 32},
		{512, 1, splitKeys, warpMinKeys, 4, 32},
		{5327, 1, splitKeys, warpMinKeys, 11, 32},
		{512, 4, splitKeys, warpMinKeys, 16, 16},
		{5327, 4, splitKeys, warpMinKeys, 44, 16},
		{131072, 4, splitKeys, warpMinKeys, 256, 16},
		{5327, 2, splitKeys, 64, 22, 32},
		{1500, 2, 64, 8, 48, 8},
	} {
		splits, minKeys := gqaSplits(c.ctx, c.g, c.keys, c.warpKeys)
		if splits != c.splits || minKeys != c.minKeys {
			t.Errorf("gqaSplits(%d, %d, %d, %d) = %d, %d, want %d, %d", c.ctx, c.g, c.keys, c.warpKeys, splits, minKeys, c.splits, c.minKeys)
		}
	}
}

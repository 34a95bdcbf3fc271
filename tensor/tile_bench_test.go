package tensor

import (
	"math/rand/v2"
	"testing"
)

// tileFn is the shape of the tile functions (X86RepackTileFunc, X86DotTileFunc, ...).
type tileFn = func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)

// matTile is the tile function backend/cpu's MatMul takes for weights of type t (a
// matrix of a multiple of X86RepackRows rows): the repacked one, the x86-order one, the
// plain one, or one dot after another.
func matTile(t DType) tileFn {
	if f := X86RepackTileFunc(t); f != nil {
		return f
	}
	if f := X86DotFunc(t); f != nil {
		if tf := X86DotTileFunc(t); tf != nil {
			return tf
		}
		return func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
			dotTileBy(f, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		}
	}
	if tf := DotTileFunc(t); tf != nil {
		return tf
	}
	f := t.traits().dot
	return func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		dotTileBy(f, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

// benchRows returns rows weight rows of n elements of type t (a few quantized rows
// repeated) and mx activation rows of t.VecDotType().
func benchRows(b *testing.B, t DType, n, rows, mx int) (w, x []byte) {
	r := rand.New(rand.NewPCG(5, 6))
	const distinct = 16
	rb := t.RowBytes(n)
	w = make([]byte, rows*rb)
	for i := range distinct {
		f := make([]float32, n)
		for k := range f {
			f[k] = float32(r.NormFloat64())
		}
		if err := Quantize(t, w[i*rb:(i+1)*rb], f); err != nil {
			b.Fatal(err)
		}
	}
	for i := distinct; i < rows; i++ {
		copy(w[i*rb:(i+1)*rb], w[(i%distinct)*rb:])
	}
	xt := t.VecDotType()
	x = make([]byte, mx*xt.RowBytes(n))
	for i := range mx {
		f := make([]float32, n)
		for k := range f {
			f[k] = float32(r.NormFloat64())
		}
		if err := QuantizeActivations(xt, x[i*xt.RowBytes(n):(i+1)*xt.RowBytes(n)], f); err != nil {
			b.Fatal(err)
		}
	}
	return w, x
}

var benchTypes = []DType{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}

// BenchmarkTileDecode: one activation row against 8192 weight rows of 4096 (more than
// the caches hold) through the tile function backend/cpu uses, on one thread; the
// throughput is weight bytes per second.
func BenchmarkTileDecode(b *testing.B) { benchTile(b, 4096, 8192, 1) }

// BenchmarkTilePrompt: 64 activation rows against 512 weight rows of 4096 on one
// thread; the throughput is weight bytes times rows per second (GB/s of weights as if
// each row were a decode).
func BenchmarkTilePrompt(b *testing.B) { benchTile(b, 4096, 512, 64) }

// BenchmarkTileDecodeCached: BenchmarkTileDecode with 256 weight rows, which stay in
// the cache between calls: the kernels' compute speed rather than the memory's.
func BenchmarkTileDecodeCached(b *testing.B) { benchTile(b, 4096, 256, 1) }

// BenchmarkTilePromptSmall: BenchmarkTilePrompt at synth-256's shape, 64 activation rows
// against 256 weight rows of 256, where a call's fixed costs weigh as much as its
// arithmetic.
func BenchmarkTilePromptSmall(b *testing.B) { benchTile(b, 256, 256, 64) }

// benchTile times matTile for each of benchTypes: mx activation rows against rows weight
// rows of n elements, on one thread; the throughput is weight bytes times mx per second.
func benchTile(b *testing.B, n, rows, mx int) {
	for _, t := range benchTypes {
		b.Run(t.String(), func(b *testing.B) {
			w, x := benchRows(b, t, n, rows, mx)
			f := matTile(t)
			dst := make([]float32, rows*mx)
			xs := t.VecDotType().RowBytes(n)
			cpuLoop(b, int64(len(w)*mx), func() { f(n, w, t.RowBytes(n), rows, x, xs, mx, dst, rows) })
		})
	}
}

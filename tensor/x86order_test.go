package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmafExact is a·b+c rounded once to float32, through exact big.Float arithmetic.
func fmafExact(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(1000).SetFloat64(float64(a)) // wide enough for any float32 a·b+c
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

// TestFmaf: fmaf rounds once, including the double-rounding cases where the float64
// sum lands exactly halfway between two float32s.
func TestFmaf(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := fmaf(a, b, c), fmafExact(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmaf(%g, %g, %g) = %g (%#08x), exact %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 200000 {
		a := float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
		b := float32(r.IntN(1<<17) - 1<<16)
		c := float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
		check(a, b, c)
	}
	// a·b = 1 + 2^-11 + 2^-24 is a float32 midpoint; a tiny c makes the float64 sum round
	// back onto it while the exact sum lies to one side.
	a, b := float32(1+0x1p-12), float32(1+0x1p-12)
	for _, c := range []float32{0x1p-60, -0x1p-60, 0x1p-80, -0x1p-80, 0, 0x1p-24, -0x1p-24} {
		check(a, b, c)
		check(-a, b, c)
	}
	doubleRounded := 0
	for range 200000 { // products of two 13-bit mantissas: many float32 midpoints
		m1 := uint32(r.IntN(1<<12)) | 1<<12
		m2 := uint32(r.IntN(1<<12)) | 1<<12
		a := float32(m1) * float32(math.Ldexp(1, r.IntN(20)-10))
		b := float32(m2)
		c := float32(math.Ldexp(float64(r.IntN(3)-1), -r.IntN(80)-20))
		check(a, b, c)
		if float32(float64(a)*float64(b)+float64(c)) != fmafExact(a, b, c) {
			doubleRounded++
		}
	}
	if doubleRounded == 0 {
		t.Error("no double-rounding case was tried")
	}
	t.Logf("%d double-rounding cases", doubleRounded)
}

// fmafTieNext is fmafTie as it was written before (the float32 neighbour through
// Nextafter32, taken where the float64 sum is a tie), kept to check the NaN and
// infinity cases, which fmafExact has no value for.
func fmafTieNext(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	r := float32(s)
	if d := s - float64(r); d != 0 {
		up := float32(math.Inf(1))
		if d < 0 {
			up = -up
		}
		if n := math.Nextafter32(r, up); float64(n)-s == d {
			bb := s - p
			e := (p - (s - bb)) + (float64(c) - bb)
			if e != 0 && (e > 0) == (d > 0) {
				return n
			}
		}
	}
	return r
}

// TestFmafTie checks fmafTie, fmaf's slow path, on its own: against the exact sum on
// float32 midpoints, subnormal and overflowing results, and against its earlier form
// on infinities and NaNs.
func TestFmafTie(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	check := func(a, b, c float32) {
		t.Helper()
		got := fmafTie(a, b, c)
		want := fmafTieNext(a, b, c)
		if !math.IsNaN(float64(a)) && !math.IsNaN(float64(b)) && !math.IsNaN(float64(c)) && !math.IsInf(float64(a), 0) && !math.IsInf(float64(b), 0) && !math.IsInf(float64(c), 0) {
			want = fmafExact(a, b, c)
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmafTie(%g, %g, %g) = %g (%#08x), want %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 300000 {
		m1 := uint32(r.IntN(1<<12)) | 1<<12
		m2 := uint32(r.IntN(1<<12)) | 1<<12
		e := r.IntN(300) - 150
		a := float32(math.Ldexp(float64(m1), e/2-12))
		b := float32(math.Ldexp(float64(m2), e-e/2-12))
		if r.IntN(2) == 0 {
			b = -b
		}
		c := float32(math.Ldexp(float64(r.IntN(5)-2), -r.IntN(150)))
		if r.IntN(4) == 0 {
			c = float32(math.Ldexp(r.NormFloat64(), e-r.IntN(8)))
		}
		check(a, b, c)
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1p-149, -0x1p-149, 0x1p-126, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001)}
	for _, a := range specials {
		for _, b := range specials {
			for _, c := range specials {
				check(a, b, c)
			}
		}
	}
}

// TestFma8 checks fma8 against fmaf lane by lane, with scales and sums chosen so that
// many lanes land on float32 midpoints (fma8Hard) beside lanes that do not.
func TestFma8(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	hard := 0
	for range 100000 {
		d := float32(uint32(r.IntN(1<<12))|1<<12) * float32(math.Ldexp(1, r.IntN(30)-20))
		var acc, want [lanes8]float32
		var s [lanes8]int32
		for l := range acc {
			s[l] = int32(r.IntN(1<<13) - 1<<12)
			acc[l] = float32(math.Ldexp(float64(r.IntN(1<<24)), r.IntN(20)-30))
			if r.IntN(4) == 0 {
				acc[l] = -float32(float64(d) * float64(s[l]) * 0.999)
			}
			want[l] = fmaf(d, float32(s[l]), acc[l])
			if fmafHard(float64(d)*float64(s[l]) + float64(acc[l])) {
				hard++
			}
		}
		fma8(&acc, d, &s)
		for l := range acc {
			if math.Float32bits(acc[l]) != math.Float32bits(want[l]) {
				t.Fatalf("fma8 lane %d: %g, fmaf %g", l, acc[l], want[l])
			}
		}
	}
	if hard == 0 {
		t.Fatal("no lane took fmafTie")
	}
	t.Logf("%d hard lanes", hard)
}

// TestAbsMaxX86 checks absMaxX86 against its lane form on blocks of mixed magnitudes,
// zeros of both signs, infinities and NaNs.
func TestAbsMaxX86(t *testing.T) {
	r := rand.New(rand.NewPCG(69, 70))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001), 0x1p-149, -math.MaxFloat32}
	for trial := range 20000 {
		var x [QK]float32
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(60)-30))
			if trial%3 == 0 && r.IntN(8) == 0 {
				x[i] = specials[r.IntN(len(specials))]
			}
		}
		if got, want := absMaxX86(&x), absMaxX86Lanes(&x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("trial %d: absMaxX86 %#08x, lanes %#08x", trial, math.Float32bits(got), math.Float32bits(want))
		}
	}
}

// randActivations is a row of n floats of mixed magnitudes, with exact ties (x·127/amax
// = k+1/2 for amax 127), zero blocks and subnormals at times.
func randActivations(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for b := 0; b < n/QK; b++ {
		y := x[b*QK : (b+1)*QK]
		switch r.IntN(6) {
		case 0: // all zero
		case 1: // scale 1: halves are ties
			for j := range y {
				y[j] = float32(r.IntN(255)-127) + float32(r.IntN(2))*0.5
			}
			y[r.IntN(QK)] = 127
		case 2: // tiny
			for j := range y {
				y[j] = math.Float32frombits(uint32(r.IntN(1 << 23)))
			}
		default:
			s := math.Ldexp(1, r.IntN(40)-20)
			for j := range y {
				y[j] = float32(r.NormFloat64() * s)
			}
		}
	}
	return x
}

// TestQuantizeActivations checks the x86 quantizers against the reference ones: the same
// scale bytes (and Q8_1 sums within the quants' difference), quants at most one step
// apart, the half-to-even case, and the other types' bytes equal to Quantize's.
func TestQuantizeActivations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, qt := range []DType{Q8_0, Q8_1} {
		got, want := make([]byte, qt.RowBytes(len(x))), make([]byte, qt.RowBytes(len(x)))
		if err := QuantizeActivations(qt, got, x); err != nil {
			t.Fatal(err)
		}
		if err := Quantize(qt, want, x); err != nil {
			t.Fatal(err)
		}
		bb, off := qt.BlockBytes(), qt.BlockBytes()-QK
		differ := 0
		for b := 0; b < len(x)/QK; b++ {
			g, w := got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb]
			if g[0] != w[0] || g[1] != w[1] {
				t.Fatalf("%v block %d: scale %x, reference %x", qt, b, g[:2], w[:2])
			}
			for j := 0; j < QK; j++ {
				d := int(int8(g[off+j])) - int(int8(w[off+j]))
				if d < -1 || d > 1 {
					t.Fatalf("%v block %d quant %d: %d, reference %d", qt, b, j, int8(g[off+j]), int8(w[off+j]))
				}
				if d != 0 {
					differ++
				}
			}
		}
		t.Logf("%v: %d of %d quants differ from the reference quantizer's by one", qt, differ, len(x))
	}
	// amax 127 makes the scale 1: 2.5 rounds to even (2) here, away from zero (3) in the
	// reference quantizer.
	block := make([]float32, QK)
	block[0], block[1] = 127, 2.5
	got, want := make([]byte, Q8_0.RowBytes(QK)), make([]byte, Q8_0.RowBytes(QK))
	if err := QuantizeActivations(Q8_0, got, block); err != nil {
		t.Fatal(err)
	}
	if err := Quantize(Q8_0, want, block); err != nil {
		t.Fatal(err)
	}
	if got[3] != 2 || want[3] != 3 {
		t.Errorf("2.5 with scale 1: x86 %d (want 2), reference %d (want 3)", got[3], want[3])
	}
	for _, qt := range []DType{F32, F16, BF16, Q8_K} {
		got, want := make([]byte, qt.RowBytes(len(x))), make([]byte, qt.RowBytes(len(x)))
		if err := QuantizeActivations(qt, got, x); err != nil {
			t.Fatal(err)
		}
		if err := Quantize(qt, want, x); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v: QuantizeActivations differs from Quantize", qt)
		}
	}
	if err := QuantizeActivations(Q8_0, make([]byte, 10), x[:32]); err == nil {
		t.Error("short dst: no error")
	}
	if err := QuantizeActivations(Q8_0, make([]byte, 34), x[:31]); err == nil {
		t.Error("31 elements: no error")
	}
	if _, err := ActivationQuantizer(I32); err == nil {
		t.Error("I32: no error")
	}
}

// TestX86DotFunc: the dispatched x86-order dots give the Go code's bits, and the sum
// they compute is the same as DotFunc's up to rounding.
func TestX86DotFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for _, typ := range []DType{Q8_0, Q5_0} {
		f := X86DotFunc(typ)
		ref, _ := DotFunc(typ)
		slow := map[DType]func(int, []byte, []byte) float32{Q8_0: dotQ8_0x86Go, Q5_0: dotQ5_0x86Go}[typ]
		for _, n := range []int{0, 32, 256, 4096, 4096 + 96} {
			t.Run(fmt.Sprintf("%v/%d", typ, n), func(t *testing.T) {
				w, x := make([]byte, typ.RowBytes(n)), make([]byte, Q8_0.RowBytes(n))
				f32 := make([]float32, n)
				for i := range f32 {
					f32[i] = float32(r.NormFloat64())
				}
				if err := Quantize(typ, w, f32); err != nil {
					t.Fatal(err)
				}
				for i := range f32 {
					f32[i] = float32(r.NormFloat64())
				}
				if err := QuantizeActivations(Q8_0, x, f32); err != nil {
					t.Fatal(err)
				}
				got, want := f(n, w, x), slow(n, w, x)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%.9g, Go %.9g", got, want)
				}
				if g := ref(n, w, x); math.Abs(float64(got-g)) > 1e-5*(1+math.Abs(float64(g))) {
					t.Errorf("%.9g, DotFunc %.9g", got, g)
				}
			})
		}
	}
	for _, typ := range []DType{F32, Q4_K, Q5_1, Q8_1, DType(99)} {
		if X86DotFunc(typ) != nil || X86DotTileFunc(typ) != nil {
			t.Errorf("%v: has an x86-order dot", typ)
		}
	}
}

// TestX86DotTile: the tile functions give every output the bits of X86DotFunc's dot,
// for tiles of every shape up to 9×9 (both four-row kernels and the rest).
func TestX86DotTile(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	for _, typ := range []DType{Q8_0, Q5_0} {
		f, tile := X86DotFunc(typ), X86DotTileFunc(typ)
		for trial := range 200 {
			nb := 1 + r.IntN(100)
			n, mw, mx := QK*nb, r.IntN(10), r.IntN(10)
			ws := typ.RowBytes(n) + r.IntN(3)*typ.BlockBytes()
			xs := Q8_0.RowBytes(n) + r.IntN(3)*34
			w := make([]byte, max(0, (mw-1)*ws+typ.RowBytes(n)))
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for b := 0; b < len(w)/typ.BlockBytes(); b++ {
				putHalf(w[b*typ.BlockBytes():], float32(r.NormFloat64()))
			}
			x := make([]byte, max(0, (mx-1)*xs+Q8_0.RowBytes(n)))
			for i := 0; i < mx; i++ {
				if err := QuantizeActivations(Q8_0, x[i*xs:i*xs+Q8_0.RowBytes(n)], randActivations(r, n)); err != nil {
					t.Fatal(err)
				}
			}
			ds := mw + r.IntN(3)
			dst := make([]float32, max(0, (mx-1)*ds+mw))
			tile(n, w, ws, mw, x, xs, mx, dst, ds)
			for i := 0; i < mx; i++ {
				for o := 0; o < mw; o++ {
					if want := f(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*ds+o]) != math.Float32bits(want) {
						t.Fatalf("%v trial %d (%d blocks, %d×%d): [%d][%d] = %.9g, X86DotFunc %.9g", typ, trial, nb, mx, mw, i, o, dst[i*ds+o], want)
					}
				}
			}
		}
	}
}

// BenchmarkX86Dot measures the x86-order dots of one 4096-element row.
func BenchmarkX86Dot(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 1))
	for _, typ := range []DType{Q8_0, Q5_0} {
		b.Run(typ.String(), func(b *testing.B) {
			w, x := make([]byte, typ.RowBytes(n)), make([]byte, Q8_0.RowBytes(n))
			_ = Quantize(typ, w, randActivations(r, n))
			_ = QuantizeActivations(Q8_0, x, randActivations(r, n))
			f := X86DotFunc(typ)
			b.SetBytes(int64(len(w)))
			var sink float32
			for b.Loop() {
				sink += f(n, w, x)
			}
			_ = sink
		})
		for _, sh := range [][2]int{{64, 1}, {1, 64}} { // weight rows, activation rows
			b.Run(fmt.Sprintf("%v/%dx%d", typ, sh[0], sh[1]), func(b *testing.B) {
				w, x := make([]byte, sh[0]*typ.RowBytes(n)), make([]byte, sh[1]*Q8_0.RowBytes(n))
				_ = Quantize(typ, w, randActivations(r, sh[0]*n))
				_ = QuantizeActivations(Q8_0, x, randActivations(r, sh[1]*n))
				f := X86DotTileFunc(typ)
				dst := make([]float32, sh[0]*sh[1])
				b.SetBytes(int64(sh[1] * len(w)))
				for b.Loop() {
					f(n, w, typ.RowBytes(n), sh[0], x, Q8_0.RowBytes(n), sh[1], dst, sh[0])
				}
			})
		}
	}
}

// BenchmarkX86Quantize measures QuantizeActivations of a 4096-float row.
func BenchmarkX86Quantize(b *testing.B) {
	const n = 4096
	x := randActivations(rand.New(rand.NewPCG(2, 2)), n)
	for _, typ := range []DType{Q8_0, Q8_1} {
		b.Run(typ.String(), func(b *testing.B) {
			q := make([]byte, typ.RowBytes(n))
			f, _ := ActivationQuantizer(typ)
			b.SetBytes(4 * n)
			for b.Loop() {
				f(q, x)
			}
		})
	}
}

// TestCvtps2dq: cvtps2dq rounds half to even as VCVTPS2DQ and gives int32's minimum out
// of range and for NaN.
func TestCvtps2dq(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	check := func(v float32) {
		t.Helper()
		want := int32(math.MinInt32)
		if v >= -0x1p31 && v < 0x1p31 {
			want = int32(math.RoundToEven(float64(v)))
		}
		if got := cvtps2dq(v); got != want {
			t.Fatalf("cvtps2dq(%g) = %d, want %d", v, got, want)
		}
	}
	for range 100000 {
		check(float32(r.NormFloat64() * 200))
		check(float32(r.IntN(1<<12)-1<<11) + 0.5) // ties
		e := math.Ldexp(1, r.IntN(34))
		check(float32((r.Float64()*2 - 1) * e))
	}
	for _, v := range []float32{0x1p22, -0x1p22, 0x1p22 + 1, -0x1p22 - 1, 0x1p22 - 0.5, -0x1p22 + 0.5,
		0x1p23, 0x1p31, -0x1p31, 0.5, -0.5, 1.5, -2.5, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		check(v)
	}
}

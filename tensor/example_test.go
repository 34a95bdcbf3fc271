package tensor_test

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

func ExampleQuantize() {
	x := make([]float32, tensor.QK) // one block: -1.55, -1.45, ..., 1.55
	for i := range x {
		x[i] = float32(i)/10 - 1.55
	}
	q := make([]byte, tensor.Q8_0.RowBytes(len(x)))
	if err := tensor.Quantize(tensor.Q8_0, q, x); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes, scale %#04x, first quants %d %d, last %d\n",
		len(q), uint16(q[0])|uint16(q[1])<<8, int8(q[2]), int8(q[3]), int8(q[len(q)-1]))
	// Output: 34 bytes, scale 0x2240, first quants -127 -119, last 127
}

func ExampleDequantize() {
	x := []float32{0.5, -0.25, 3, 1e-3}
	for _, typ := range []tensor.DType{tensor.F16, tensor.BF16} {
		q := make([]byte, typ.RowBytes(len(x)))
		y := make([]float32, len(x))
		if err := tensor.Quantize(typ, q, x); err != nil {
			fmt.Println(err)
			return
		}
		if err := tensor.Dequantize(typ, y, q); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(typ, y)
	}
	// Output:
	// F16 [0.5 -0.25 3 0.0010004044]
	// BF16 [0.5 -0.25 3 0.0009994507]
}

func ExampleDot() {
	const n = 64
	w, x := make([]float32, n), make([]float32, n)
	for i := range w {
		w[i] = float32(i%8-4) / 2 // exact in Q4_0: d = 0.25
		x[i] = float32(i%5) / 4
	}
	// Weights as Q4_0; activations converted to its vec-dot type Q8_0 first.
	wq := make([]byte, tensor.Q4_0.RowBytes(n))
	xq := make([]byte, tensor.Q4_0.VecDotType().RowBytes(n))
	if err := tensor.Quantize(tensor.Q4_0, wq, w); err != nil {
		fmt.Println(err)
		return
	}
	if err := tensor.Quantize(tensor.Q4_0.VecDotType(), xq, x); err != nil {
		fmt.Println(err)
		return
	}
	d, err := tensor.Dot(tensor.Q4_0, n, wq, xq)
	if err != nil {
		fmt.Println(err)
		return
	}
	var exact float32
	for i := range w {
		exact += w[i] * x[i]
	}
	fmt.Printf("Q4_0·Q8_0 = %.3f (float32: %.3f)\n", d, exact)
	// Output: Q4_0·Q8_0 = -7.759 (float32: -7.750)
}

func ExampleF32ToF16() {
	for _, f := range []float32{1, 0.1, 65504, 1e5} {
		h := tensor.F32ToF16(f)
		fmt.Printf("%g -> %#04x -> %g\n", f, h, tensor.F16ToF32(h))
	}
	// Output:
	// 1 -> 0x3c00 -> 1
	// 0.1 -> 0x2e66 -> 0.099975586
	// 65504 -> 0x7bff -> 65504
	// 100000 -> 0x7c00 -> +Inf
}

func ExampleF32ToBF16() {
	h := tensor.F32ToBF16(0.1)
	fmt.Printf("%#04x -> %g\n", h, tensor.BF16ToF32(h))
	// Output: 0x3dcd -> 0.100097656
}

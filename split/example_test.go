package split_test

import (
	"fmt"

	"github.com/infergo/infer/split"
)

// A 32-layer model split evenly over two devices: the output head counts as a 33rd
// layer, so the first device takes 17 layers and the second 15 plus the head.
func ExampleLayers() {
	stages, err := split.Layers(32, []float64{1, 1})
	if err != nil {
		panic(err)
	}
	for _, s := range stages {
		fmt.Printf("slot %d: layers %d-%d\n", s.Slot, s.First, s.Last-1)
	}
	// Output:
	// slot 0: layers 0-16
	// slot 1: layers 17-31
}

func ExampleMake() {
	sz := split.Sizes{Layer: []int64{1 << 30, 1 << 30, 1 << 30, 1 << 30}, KV: 1 << 28, Output: 1 << 29}
	devs := []split.Device{{Name: "cuda:0", Free: 4 << 30}, {Name: "cuda:1", Free: 4 << 30}}
	p, err := split.Make(sz, devs, split.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Print(p)
	// Output:
	// stage device                   layers       weights         kv    scratch free after
	// 0     cuda:0                   0-2         3.00 GiB 768.00 MiB        0 B 256.00 MiB
	// 1     cuda:1                   3-3+out     1.50 GiB 256.00 MiB        0 B   2.25 GiB
}

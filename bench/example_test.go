package bench_test

import (
	"fmt"

	"github.com/infergo/infer/bench"
)

// Tests turns llama-bench's -p and -n lists into tests.
func ExampleTests() {
	tests, err := bench.Tests([]int{512, 64}, []int{128})
	if err != nil {
		panic(err)
	}
	for _, t := range tests {
		fmt.Println(t.Name(), t.Tokens())
	}
	// Output:
	// pp512 512
	// pp64 64
	// tg128 128
}

// AtDepths runs every test again after tokens already in the cache (llama-bench's -d).
func ExampleAtDepths() {
	tests, _ := bench.Tests([]int{512}, []int{256})
	tests, err := bench.AtDepths(tests, []int{0, 5071})
	if err != nil {
		panic(err)
	}
	for _, t := range tests {
		fmt.Printf("%s: %d timed tokens, a cache of %d\n", t.Name(), t.Tokens(), t.Context())
	}
	// Output:
	// pp512: 512 timed tokens, a cache of 512
	// tg256: 256 timed tokens, a cache of 256
	// pp512 @ d5071: 512 timed tokens, a cache of 5583
	// tg256 @ d5071: 256 timed tokens, a cache of 5327
}

// The size and params columns of a LLaMA-2-7B Q4_0 file, as llama-bench prints them.
func ExampleFormatSize() {
	fmt.Println(bench.FormatSize(3_825_065_984), bench.FormatParams(6_738_415_616))
	// Output: 3.56 GiB 6.74 B
}

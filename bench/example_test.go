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

// The size and params columns of a LLaMA-2-7B Q4_0 file, as llama-bench prints them.
func ExampleFormatSize() {
	fmt.Println(bench.FormatSize(3_825_065_984), bench.FormatParams(6_738_415_616))
	// Output: 3.56 GiB 6.74 B
}

// Package bench measures prompt processing and generation throughput the way
// llama.cpp's llama-bench does, and prints its tables.
//
// A test is pp<N> (one batch of N random prompt tokens evaluated from an empty KV
// cache), tg<N> (N tokens evaluated one at a time from an empty cache), or both
// (pp<N>+tg<M>). Run does a warm-up (the whole prompt for pp, one token for tg), then
// times each repetition from an empty cache; the reported figure is the mean ± sample
// standard deviation of tokens per second over the repetitions, computed as
// llama-bench computes it. Markdown and JSON printers write llama-bench's columns and
// widths so that rows can be pasted beside llama.cpp's.
//
// The package's Go benchmarks (BenchmarkDecode, BenchmarkPrefill) run the shared test
// models end to end and report tok/s; RESULTS.md records measured runs of
// 'infer bench' next to llama.cpp's figures.
package bench

// Infer runs LLaMA-family GGUF models on the CPU or across CUDA GPUs.
//
// Usage:
//
//	infer <command> [flags]
//
// Commands:
//
//	run         generate text from a prompt
//	perplexity  score a text file the way llama-perplexity does
//	tokenize    print the token ids of a text
//	bench       measure prompt and generation throughput (llama-bench layout)
//	inspect     print a GGUF file's metadata and tensor table
//	quantize    write a quantized copy of a GGUF file
//	synth       write a random-weight model of a real model's shape
//	devices     list compute devices and the peer-access table
//
// Run `infer <command> -h` for a command's flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// A command is one subcommand of infer.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the table of subcommands, in the order the usage lists them.
var commands = []command{
	{"run", "generate text from a prompt", cmdRun},
	{"perplexity", "score a text file the way llama-perplexity does", cmdPerplexity},
	{"tokenize", "print the token ids of a text", cmdTokenize},
	{"bench", "measure prompt and generation throughput", cmdBench},
	{"inspect", "print a GGUF file's metadata and tensor table", cmdInspect},
	{"quantize", "write a quantized copy of a GGUF file", cmdQuantize},
	{"synth", "write a random-weight model of a real model's shape", cmdSynth},
	{"devices", "list compute devices and the peer-access table", cmdDevices},
}

// usageError marks an error in the command line; main exits 2 for it.
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// One line, even for joined errors (errors.Join separates them with newlines).
		fmt.Fprintln(os.Stderr, "infer:", strings.ReplaceAll(err.Error(), "\n", "; "))
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run dispatches args to a subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return usageError{errors.New("no command given")}
		}
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	printUsage(stderr)
	return usageError{fmt.Errorf("unknown command %q", args[0])}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: infer <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'infer <command> -h' for a command's flags.")
}

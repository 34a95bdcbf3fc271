package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/infergo/infer/model/tokenizer"
)

// tokenizeJSON is the output of 'infer tokenize --json'.
type tokenizeJSON struct {
	Tokens []int32 `json:"tokens"`
}

// tokenizeFlags are the flags of 'infer tokenize'.
type tokenizeFlags struct {
	path, prompt string
	noBOS, json  bool
}

// parseTokenize parses tokenize's command line.
func parseTokenize(args []string, stderr io.Writer) (*tokenizeFlags, bool, error) {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &tokenizeFlags{}
	fs.StringVar(&f.path, "m", "", "GGUF model `file` (required)")
	fs.StringVar(&f.prompt, "p", "", "`text` to tokenize")
	fs.BoolVar(&f.noBOS, "no-bos", false, "do not add BOS (and the vocabulary's other special tokens)")
	fs.BoolVar(&f.json, "json", false, `print {"tokens":[...]}`)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer tokenize -m FILE -p TEXT [-no-bos] [-json]\n\nPrint the token ids of a text, one per line with its piece.")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return nil, help, err
	}
	if f.path == "" {
		return nil, false, usageError{errors.New("tokenize: -m: a model file is required")}
	}
	return f, false, nil
}

// cmdTokenize implements 'infer tokenize': print the token ids of a text, one line per
// token (id and quoted piece), or one JSON object with --json.
func cmdTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, help, err := parseTokenize(args, stderr)
	if help || err != nil {
		return err
	}
	path, prompt, noBOS, asJSON := &f.path, &f.prompt, &f.noBOS, &f.json
	// Only the vocabulary is read: any GGUF with one works, whatever its architecture.
	tok, err := tokenizer.Load(*path)
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	ids := tok.Encode(*prompt, !*noBOS)
	if *asJSON {
		if ids == nil {
			ids = []int32{}
		}
		return json.NewEncoder(stdout).Encode(tokenizeJSON{Tokens: ids})
	}
	for _, id := range ids {
		if _, err := fmt.Fprintf(stdout, "%6d %q\n", id, tok.Piece(id)); err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"io"
)

// cmdPerplexity implements 'infer perplexity'. (Placeholder until the command lands.)
func cmdPerplexity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("perplexity: not implemented yet")
}

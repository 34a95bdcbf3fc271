package main

import (
	"context"
	"errors"
	"io"
)

// cmdTokenize implements 'infer tokenize'. (Placeholder until the command lands.)
func cmdTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("tokenize: not implemented yet")
}

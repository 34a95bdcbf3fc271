package main

import (
	"context"
	"errors"
	"io"
)

// cmdQuantize implements 'infer quantize'. (Placeholder until the command lands.)
func cmdQuantize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("quantize: not implemented yet")
}

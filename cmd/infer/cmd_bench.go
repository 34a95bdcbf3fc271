package main

import (
	"context"
	"errors"
	"io"
)

// cmdBench implements 'infer bench'. (Placeholder until the command lands.)
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: not implemented yet")
}

package main

import (
	"context"
	"errors"
	"io"
)

// cmdRun implements 'infer run'. (Placeholder until the command lands.)
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("run: not implemented yet")
}

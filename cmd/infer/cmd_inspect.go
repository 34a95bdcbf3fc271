package main

import (
	"context"
	"errors"
	"io"
)

// cmdInspect implements 'infer inspect'. (Placeholder until the command lands.)
func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("inspect: not implemented yet")
}

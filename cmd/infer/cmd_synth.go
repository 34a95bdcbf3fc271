package main

import (
	"context"
	"errors"
	"io"
)

// cmdSynth implements 'infer synth'. (Placeholder until the command lands.)
func cmdSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("synth: not implemented yet")
}

package main

import (
	"context"
	"errors"
	"io"
)

// cmdDevices implements 'infer devices'. (Placeholder until the command lands.)
func cmdDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("devices: not implemented yet")
}

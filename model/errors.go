package model

import (
	"errors"

	"github.com/infergo/infer/split"
)

// Sentinel errors a caller can test with errors.Is; the errors returned wrap them with
// what failed.
var (
	// ErrClosed is returned by a Model or Session used after Close.
	ErrClosed = errors.New("model: closed")
	// ErrContextFull is returned by Eval when the tokens do not fit in the session's KV
	// cache.
	ErrContextFull = errors.New("model: context full")
	// ErrUnsupportedArchitecture is returned by Load for a general.architecture the
	// package cannot run.
	ErrUnsupportedArchitecture = errors.New("model: unsupported architecture")
	// ErrDoesNotFit is returned by Load and PlanFor when the model, its KV cache and its
	// scratch do not fit in the devices' free memory.
	ErrDoesNotFit = errors.New("model: does not fit")
)

// doesNotFit makes split's shortfall error (split.ErrDoesNotFit) also an ErrDoesNotFit,
// keeping its text; other errors pass unchanged.
func doesNotFit(err error) error {
	if errors.Is(err, split.ErrDoesNotFit) {
		return fitError{err}
	}
	return err
}

// fitError is a planning error that is an ErrDoesNotFit.
type fitError struct{ error }

func (e fitError) Is(target error) bool { return target == ErrDoesNotFit }
func (e fitError) Unwrap() error        { return e.error }

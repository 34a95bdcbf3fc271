package model

import "errors"

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

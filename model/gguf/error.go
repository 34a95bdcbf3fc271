package gguf

import (
	"errors"
	"fmt"
)

// ErrFormat is matched (errors.Is) by every error that reports a malformed file.
var ErrFormat = errors.New("gguf: malformed file")

// ErrNotFound is matched by the typed getters' error for an absent key.
var ErrNotFound = errors.New("not found")

// A FormatError reports malformed input: where it is, which field, and what is wrong.
type FormatError struct {
	Offset int64  // byte offset of the offending field in the file
	Field  string // the field, e.g. `kv 3 "general.name": value` or `tensor 5 "output.weight"`
	Msg    string // what is wrong with it
}

// Error formats the error as "gguf: offset 0x1a3: <field>: <message>".
func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("gguf: offset %#x: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("gguf: offset %#x: %s: %s", e.Offset, e.Field, e.Msg)
}

// Is reports whether target is ErrFormat.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

// inField prefixes the field of a *FormatError with field; other errors pass through.
func inField(err error, field string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		if fe.Field == "" {
			fe.Field = field
		} else {
			fe.Field = field + ": " + fe.Field
		}
	}
	return err
}

// keyError is returned by the typed getters of File.
func keyError(key, format string, args ...any) error {
	return fmt.Errorf("gguf: key %q: "+format, append([]any{key}, args...)...)
}

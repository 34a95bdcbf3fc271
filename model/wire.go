package model

import (
	"fmt"
	"strings"

	"github.com/infergo/infer/tensor"
)

// WireFormat is the element type of the hidden state on the hops between stages
// (Options.Wire). The zero value, WireF32, sends the hidden state as computed, so a split
// model's logits are bit-identical to one device's. WireF16 trades that exactness for
// half the bytes on the wire: at every hop the producer rounds x to F16 (to nearest even;
// magnitudes past 65504 become infinities) and the consumer widens it back to F32. It
// pays where bytes are dear (host-staged hops, slow links); plans of one stage have no
// hop and ignore it.
type WireFormat uint8

// The wire formats.
const (
	WireF32 WireFormat = iota // exact (the default)
	WireF16                   // half the bytes; x rounded to F16 at every hop
)

// DType is the tensor type of the hidden state on the wire.
func (w WireFormat) DType() tensor.DType {
	if w == WireF16 {
		return tensor.F16
	}
	return tensor.F32
}

// String is "f32" or "f16", as the --wire flag spells it.
func (w WireFormat) String() string {
	switch w {
	case WireF32:
		return "f32"
	case WireF16:
		return "f16"
	}
	return fmt.Sprintf("WireFormat(%d)", uint8(w))
}

// valid reports whether w is one of the wire formats.
func (w WireFormat) valid() bool { return w <= WireF16 }

// ParseWireFormat parses "f32" or "f16" (any case).
func ParseWireFormat(s string) (WireFormat, error) {
	switch strings.ToLower(s) {
	case "f32":
		return WireF32, nil
	case "f16":
		return WireF16, nil
	}
	return 0, fmt.Errorf("model: wire format %q: want f32 or f16", s)
}

// MarshalText implements encoding.TextMarshaler (for flag.TextVar, say).
func (w WireFormat) MarshalText() ([]byte, error) {
	if !w.valid() {
		return nil, fmt.Errorf("model: %v: not a wire format", w)
	}
	return []byte(w.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseWireFormat.
func (w *WireFormat) UnmarshalText(text []byte) error {
	v, err := ParseWireFormat(string(text))
	if err != nil {
		return err
	}
	*w = v
	return nil
}

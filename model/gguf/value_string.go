package gguf

import (
	"strconv"
	"strings"
)

// arrayPreview is how many elements String shows of an array before eliding the rest.
const arrayPreview = 3

// String formats v for people: numbers plainly, strings quoted, and arrays longer than
// a few elements abbreviated with their length and element type, as in
// [512 strings: "<unk>", "<s>", "</s>", ...].
func (v Value) String() string {
	var b strings.Builder
	v.format(&b)
	return b.String()
}

func (v Value) format(b *strings.Builder) {
	switch v.typ {
	case StringType:
		b.WriteString(strconv.Quote(v.str))
	case BoolType:
		b.WriteString(strconv.FormatBool(v.bits != 0))
	case Float32Type, Float64Type:
		f, _ := v.AsFloat()
		bits := 64
		if v.typ == Float32Type {
			bits = 32
		}
		b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	case Int8Type, Int16Type, Int32Type, Int64Type:
		b.WriteString(strconv.FormatInt(int64(v.bits), 10))
	case ArrayType:
		v.formatArray(b)
	default:
		b.WriteString(strconv.FormatUint(v.bits, 10))
	}
}

func (v Value) formatArray(b *strings.Builder) {
	n := v.Len()
	b.WriteByte('[')
	shown := n
	if n > arrayPreview+1 {
		shown = arrayPreview
		b.WriteString(strconv.Itoa(n) + " " + v.elem.String() + "s: ")
	}
	for i := range shown {
		if i > 0 {
			b.WriteString(", ")
		}
		v.Index(i).format(b)
	}
	if shown < n {
		b.WriteString(", ... ")
	}
	b.WriteByte(']')
}
